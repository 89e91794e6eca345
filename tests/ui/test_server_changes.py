"""The main screen says what the server turned off that costs speed, why, and the fix."""

from __future__ import annotations

from textual.widgets import Static

from sgwatch.control.controller import Controller
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.transport.local import LocalTransport
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.flagpanel import FlagPanel
from tests.conftest import FIXTURES, Clock, settle, until
from tests.ui.test_dashboard import SIZE, dashboard, text
from tests.ui.test_screens import server
from tests.unit.test_speed import seed_log


async def test_the_auto_disabled_piecewise_graphs_are_on_the_main_screen_with_the_reason():
    w = Watch("ct129")
    w.feed(seed_log().encode())
    app, clock = dashboard(w)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        changes = " ".join(text(app.query_one("#server-changes", Static)).split())
        assert changes.startswith("⚠ changed by the server, costs speed")
        assert (
            "• piecewise CUDA graphs off (prefill, extend): Qwen3_5ForConditionalGeneration "
            "is multimodal → --enforce-piecewise-cuda-graph" in changes
        )
        assert "overlap scheduler off" in changes
        checklist = text(app.query_one("#checklist", Static))
        assert "– Compile          off" in checklist  # never pending: it will not come
        assert "· Compile" not in checklist


async def test_a_run_with_nothing_changed_shows_no_box():
    w = Watch("ct129")
    w.feed(
        b"[2026-01-01 10:00:00] server_args=ServerArgs(model_path='m', tp_size=1,"
        b" enforce_piecewise_cuda_graph=True, disable_piecewise_cuda_graph=False)\n"
    )
    app, clock = dashboard(w)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        assert not app.query_one("#server-changes", Static).display
        assert "· Compile" in text(app.query_one("#checklist", Static))


# The simulator's own log of the seed's first try on a pair of RTX A6000, up to its 12th
# decode line: SGWATCH_SIM_GPU_NAME="NVIDIA RTX A6000" SGWATCH_SIM_GPU_MEM_MIB=49140
# python -m sgwatch.sim --model-path Qwen/Qwen3.6-27B --tp 2 --speculative-algorithm NEXTN
# --speculative-num-steps 3 --speculative-num-draft-tokens 4 (one request at a time).
SEED_SIM_LOG = FIXTURES / "sglang" / "sim_seed_nextn_a6000.log"


def test_seed_main_screen_snapshot(snap_compare):
    """What changed and why under the checklist; the roofline in words at accept length."""
    w = Watch("ct129")
    w.feed(SEED_SIM_LOG.read_bytes())
    w.feed_gpu(
        b"0, NVIDIA RTX A6000, 96, 45000, 49140, 280.00, 70\n"
        b"1, NVIDIA RTX A6000, 95, 44800, 49140, 276.00, 69\n"
    )
    app, clock = dashboard(w, theme="sgwatch-dark")
    assert snap_compare(app, terminal_size=SIZE, run_before=lambda pilot: settle(app, pilot, clock))


async def test_the_flag_panel_keeps_costly_changes_apart_from_filled_in_defaults():
    w = Watch("ct129")
    w.feed(SEED_SIM_LOG.read_bytes())
    argv = [
        "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B", "--tp", "2",
        "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
        "--speculative-num-draft-tokens", "4", "--port", "31878",
    ]  # fmt: skip
    session = Session(w, LocalTransport)
    session.server = server(argv=argv)
    ctl = Controller(session)
    clock = Clock()
    app = SgwatchApp([w], bell=False, controllers=[ctl], clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, FlagPanel) and app.screen.catalog)
        speed = app.screen.query_one("#speed", Static)
        await until(pilot, lambda: "piecewise CUDA graphs off" in text(speed))
        costly = " ".join(text(speed).split())
        assert "Qwen3_5ForConditionalGeneration is multimodal" in costly
        assert "override: --enforce-piecewise-cuda-graph" in costly
        filled = text(app.screen.query_one("#effective", Static))
        assert "--disable-piecewise-cuda-graph" not in filled  # listed once, where it costs
        assert "--mem-fraction-static" in filled  # a default the server computed
