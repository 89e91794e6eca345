"""The dashboard on a pod, as a person drives it: `sgwatch k8s://llm/vllm` against the
kubectl stand-in, keys in, what the screen shows out."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import Static

from sgwatch.control.history import History
from sgwatch.control.podcontrol import PodController
from sgwatch.core.cmdline import parse
from sgwatch.core.podaddress import parse_address
from sgwatch.live.options import Options
from sgwatch.live.podsession import PodSession
from sgwatch.live.watch import Watch
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.modals import ConfirmRestart
from sgwatch.ui.probe_advice import ProbeAdviceScreen
from sgwatch.ui.widgets.crash import CrashBanner
from sgwatch.ui.widgets.gpus import GpuPanel
from sgwatch.ui.widgets.header import HostHeader
from tests.conftest import until
from tests.k8s.conftest import container, deployment, http_probe, sim, wait_for

SIZE = (140, 45)
SAMPLE = Path(__file__).resolve().parents[2] / "app/samples/qwen27b-tp2-warmup.log"
ADDRESS = "k8s://llm/vllm"


def dashboard(address: str = ADDRESS) -> tuple[SgwatchApp, PodSession]:
    """The app `sgwatch k8s://...` opens (cli/dashboard.py): the pod followed on."""
    session = PodSession(Watch(address), parse_address(address), options=Options(keep_looking=True))
    ctl = PodController(session)
    return SgwatchApp([session.watch], [lambda _w: session.run()], controllers=[ctl]), session


def text(app, selector) -> str:
    return str(app.query_one(selector).render())


def recorded(cluster, cmd: list[str], *seconds: float) -> None:
    """Earlier warmups of `cmd` in the workload's history, as `wait` would record them."""
    folder = Path(cluster.env["XDG_STATE_HOME"], "sgwatch", "history")
    history = History("k8s://kind-kind/llm/vllm", folder)
    for s in seconds:
        run = history.launched(parse(cmd), None, None, "pod/vllm-old")
        history.outcome(run, "ready", warmup_seconds=s, ready_after_s=s, model="Qwen/Qwen3-8B")


async def test_a_pod_warms_up_to_ready_on_screen_with_its_probe_and_no_gpu_blanks(kube):
    kube.apply(deployment("vllm", container(sim(speed=50), startupProbe=http_probe(1, 60))))
    wait_for(kube.pods)
    app, session = dashboard()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "startup probe allows 1m00s" in text(app, "#checklist"))
        assert "READY" not in text(app, HostHeader)  # shown while it warms up
        await until(pilot, lambda: "READY" in text(app, HostHeader), timeout=40)
        checklist = text(app, "#checklist")
        assert "✓ Ready" in checklist and "✓ Weights" in checklist
        assert "pod/vllm-" in app.query_one("LogPane").border_subtitle
        gpus = app.query_one(GpuPanel)
        assert "GPUs: not read from pods" in str(gpus.query_one(".note", Static).render())
    assert session.server is not None and session.server.owner.name == "vllm"


async def test_the_probe_key_shows_advice_from_recorded_warmups_or_says_there_is_none(kube):
    cmd = sim(speed=50)
    kube.apply(deployment("vllm", container(cmd)))
    wait_for(kube.pods)
    app, _ = dashboard()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "pod/vllm-" in (app.query_one("LogPane").border_subtitle or ""))
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ProbeAdviceScreen))
        said = str(app.screen.query_one("#advice-none", Static).render())
        assert "no recorded warmup of Qwen/Qwen3-8B yet" in said
        await pilot.press("escape")
        recorded(kube, cmd, 400, 420)
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ProbeAdviceScreen))
        advice = str(app.screen.query_one("#advice", Static).render())
        assert "startupProbe:" in advice and "p95 420 s x 1.5 = 630 s" in advice
        assert "failureThreshold: 63" in advice


async def test_a_warmup_past_its_startup_probe_is_warned_then_its_kill_named_and_kept(kube):
    cmd = sim(speed=1)
    recorded(kube, cmd, 410, 420, 430)  # about 7 minutes to ready, by earlier runs
    kube.apply(deployment("vllm", container(cmd, startupProbe=http_probe(2, 10))))  # 20 s
    wait_for(kube.pods)
    app, _ = dashboard()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "⚠ ready expected at" in text(app, "#checklist"))
        warned = " ".join(text(app, "#checklist").split())  # the panel wraps it
        assert "startup probe allows 20s" in warned and "kill this warmup in" in warned
        assert "CRASHED" not in text(app, HostHeader)  # warned while there was still time
        banner = app.query_one(CrashBanner)
        await until(pilot, lambda: "killed by the startup probe" in str(banner.render()))
        assert "budget 20 s" in str(banner.render())
        # the kubelet restarts it: the new container is followed, the kill kept on screen
        note = app.query_one("#note", Static)
        await until(pilot, lambda: "previous container (restart 1)" in str(note.render()))
        assert "was killed by the startup probe" in str(note.render())


async def test_a_same_flags_restart_from_the_flag_panel_rolls_out_and_follows_to_ready(kube):
    kube.apply(deployment("vllm", container(sim(speed=50))))
    wait_for(kube.pods)
    app, session = dashboard()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "READY" in text(app, HostHeader), timeout=40)
        first = session.pod
        await pilot.press("f")
        await until(pilot, lambda: "options" in text(app.screen, "#flag-title"))
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmRestart))
        shown = lambda: " ".join(str(s.render()) for s in app.screen.query(Static))  # noqa: E731
        await until(pilot, lambda: "rollout restart deployment/vllm" in shown())  # once composed
        await pilot.press("y")
        await until(pilot, lambda: session.pod != first, timeout=30)
        # the screen names the new pod on its next refresh (the old READY may show till then)
        log_pane = app.query_one("LogPane")
        await until(pilot, lambda: f"pod/{session.pod}" in log_pane.border_subtitle)
        await until(pilot, lambda: "READY" in text(app, HostHeader), timeout=40)


async def test_a_bare_pod_restart_is_refused_in_one_line(kube):
    c = container(sim(speed=50))
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "vllm"},
            "spec": {"terminationGracePeriodSeconds": 2, "containers": [c]},
        }
    )
    wait_for(kube.pods)
    app, _ = dashboard()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "READY" in text(app, HostHeader), timeout=40)
        await pilot.press("f")
        await until(pilot, lambda: "options" in text(app.screen, "#flag-title"))
        await pilot.press("R")
        status = app.screen.query_one("#flag-status", Static)
        await until(pilot, lambda: "refused" in str(status.render()))
        assert "is a bare pod: nothing would recreate it" in str(status.render())


async def test_a_pod_beside_another_host_has_its_own_tab_and_the_probe_key_there_only(kube):
    kube.apply(deployment("vllm", container(sim(speed=50))))
    wait_for(kube.pods)
    other = Watch("ct129")  # a host's watch, its log replayed
    other.feed(SAMPLE.read_bytes())
    other.end()
    session = PodSession(Watch(ADDRESS), parse_address(ADDRESS), options=Options(keep_looking=True))
    app = SgwatchApp(
        [other, session.watch],
        [lambda _w: asyncio.sleep(0), lambda _w: session.run()],
        controllers=[None, PodController(session)],
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("1")
        await until(pilot, lambda: app.pane.watch is other)
        assert not app.check_action("probe_advice", ())  # not on a host's tab
        await pilot.press("2")
        await until(pilot, lambda: "READY" in str(app.pane.query_one(HostHeader).render()))
        assert app.check_action("probe_advice", ())
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ProbeAdviceScreen))
