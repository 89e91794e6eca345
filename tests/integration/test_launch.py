"""hosts.NAME.launch through a real sshd: no server runs, the dashboard offers the
configured command, L shows it in a confirm dialog, y starts it detached, and the
dashboard follows the new server to ready; the run is in the history."""

from __future__ import annotations

import os
import shlex
import signal
import sys
from pathlib import Path

from textual.widgets._footer import FooterKey

from sgwatch.config import HostProfile
from sgwatch.control.controller import Controller
from sgwatch.control.history import History
from sgwatch.core.cmdline import parse_shell
from sgwatch.live.linkstate import LIVE
from sgwatch.live.options import Options
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.sim.common.nvidia_smi import install
from sgwatch.transport.local import LocalTransport
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.modals import ConfirmRestart
from tests.conftest import until
from tests.integration.helpers import until as until_true
from tests.integration.sshd import environ, free_port

UP = ("ready", "serving")


def footer_keys(app) -> dict[str, str]:
    # the keys shown: the footer keeps the keys of other sets mounted, hidden
    return {k.description: k.key_display for k in app.query(FooterKey) if k.display}


async def test_no_server_then_L_launches_the_configured_command_and_follows_it(host, ssh, tmp_path):
    state = tmp_path / "gpu-state"
    install(host.gpu_bin, state)
    log = tmp_path / "run" / "server.log"
    log.parent.mkdir()
    argv = [sys.executable, "-m", "sgwatch.sim", "--model-path", "Qwen/Qwen3-8B"]
    argv += ["--port", str(free_port()), "--sim-speed", "100"]
    launch = f"SGWATCH_SIM_STATE={shlex.quote(str(state))} {shlex.join(argv)}"
    watch = Watch("gpu129")
    session = Session(
        watch,
        lambda: ssh("gpu129"),
        profile=HostProfile(log=str(log), launch=launch),
        options=Options(offer_launch=True),
    )
    ctl = Controller(session, History("gpu129", tmp_path / "history"))
    app = SgwatchApp([watch], [lambda _w: session.run()], controllers=[ctl], bell=False)
    try:
        async with app.run_test(size=(140, 45)) as pilot:
            await until(pilot, lambda: "launch server" in footer_keys(app) or session.server)
            assert session.server is None, f"a server runs on the test host: {session.server.argv}"
            assert "hosts.gpu129.launch can start one" in watch.note
            assert footer_keys(app)["launch server"] == "L"
            await pilot.press("L")
            await until(pilot, lambda: isinstance(app.screen, ConfirmRestart))
            assert app.screen.command == shlex.join(["SGWATCH_SIM_STATE=" + str(state), *argv])
            assert not log.exists()  # nothing starts before the confirmation
            await pilot.press("y")
            await until(pilot, lambda: session.server is not None, timeout=60)
            await until(pilot, lambda: watch.state.state in UP, timeout=60)
            assert "launch server" not in footer_keys(app)
    finally:
        if session.server is not None and host.alive(session.server.pid):
            host.killpg(session.server.pid, signal.SIGKILL)
    server = session.server
    assert server.argv == argv and server.log == str(log)
    assert watch.link == LIVE and f"launched: pid {server.pid}" in watch.note
    assert "Qwen/Qwen3-8B" in log.read_text()  # the server's own output, in the profile's log
    (run,) = ctl.history.runs()
    assert (run.argv, run.pid, run.outcome) == (argv, server.pid, "ready")


async def test_without_a_log_in_the_profile_it_writes_under_the_hosts_state_directory(tmp_path):
    # localhost: the host's environment is this one, whose XDG_STATE_HOME conftest points here
    argv = [sys.executable, "-m", "sgwatch.sim", "--model-path", "Qwen/Qwen3-8B"]
    argv += ["--port", str(free_port()), "--sim-speed", "100"]
    profile = HostProfile(launch=shlex.join(argv))
    session = Session(Watch("localhost"), LocalTransport, profile=profile)
    ctl = Controller(session, History("localhost", tmp_path / "history"))
    launched = await ctl.launch(parse_shell(session.profile.launch))
    try:
        log = Path(launched.log)
        assert log.parent == Path(os.environ["XDG_STATE_HOME"], "sgwatch", "logs")
        await until_true(lambda: "Qwen/Qwen3-8B" in log.read_text())
        assert Path(f"/proc/{launched.pid}/cwd").readlink() == Path.home()
        assert environ(launched.pid)["PYTHONUNBUFFERED"] == "1"
    finally:
        os.killpg(launched.pid, signal.SIGKILL)


async def test_the_launch_command_is_preflighted_by_its_own_interpreters_parser(tmp_path):
    sim = f"{shlex.quote(sys.executable)} -m sgwatch.sim --model-path Qwen/Qwen3-8B"
    session = Session(Watch("localhost"), LocalTransport)
    ctl = Controller(session, History("localhost", tmp_path / "history"))
    good = await ctl.launch_check(parse_shell(sim + " --tp 2"))
    assert good.ok and good.checked_by == "the simulator's parser"
    bad = await ctl.launch_check(parse_shell(sim + " --enable-warp-drive"))
    assert not bad.ok and "--enable-warp-drive" in str(bad.errors)
