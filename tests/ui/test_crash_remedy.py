"""A crash whose message names a flag change that avoids it: the banner says the fix
and where it died (the phase `replay` and `wait` name), and the flag panel offers
it as one key, F, which restarts with exactly that change (a server given
--enforce-piecewise-cuda-graph drops it, or the disable would not count)."""

from sgwatch.control import flagedit
from sgwatch.core.summary import summarize
from sgwatch.ui.badges import PHASE_LABELS
from sgwatch.ui.flagpanel import FlagPanel
from sgwatch.ui.widgets.crash import CrashBanner
from tests.conftest import FIXTURES, settle, until
from tests.ui.test_dashboard import text, watch_of
from tests.ui.test_screens import SIZE, dashboard, open_screen

LOG = FIXTURES / "sglang/crash_piecewise_capture.log"
FIX = "drop --enforce-piecewise-cuda-graph, add --disable-piecewise-cuda-graph"


async def test_the_banner_says_the_fix_and_the_phase_replay_names():
    watch = watch_of(LOG)
    app, _, clock = dashboard(watch, "sgwatch-dark")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        banner = text(app.query_one(CrashBanner))
        crash = summarize(watch.state).crash
        assert crash.phase == "capturing_graphs"
        assert f"during {PHASE_LABELS[crash.phase]}" in banner
        assert "Piecewise CUDA Graph failed with error: 'typing.Union'" in banner
        assert f"fix: {FIX}" in banner and "F: restart with it" in banner


async def test_f_in_the_flag_panel_restarts_with_the_crash_fix():
    app, _, clock = dashboard(watch_of(LOG), "sgwatch-dark")
    async with app.run_test(size=SIZE) as pilot:
        await open_screen(app, pilot, clock, "f", FlagPanel, lambda panel: panel.catalog)
        panel = app.screen
        box = panel.query_one("#remedy")
        assert box.display and FIX in text(box)
        restarts = []
        panel._restart = lambda target, title: restarts.append((target, title))
        await pilot.press("F")
        await until(pilot, lambda: restarts)
        ((target, title),) = restarts
        assert FIX in title
        assert flagedit.describe_changes(panel.running, target, panel.catalog) == [
            "- --enforce-piecewise-cuda-graph",
            "+ --disable-piecewise-cuda-graph",
        ]


async def test_without_a_crash_fix_the_panel_shows_none_and_f_restarts_nothing():
    app, _, clock = dashboard(watch_of(FIXTURES / "sglang/crash_capture_oom.log"), "sgwatch-dark")
    async with app.run_test(size=SIZE) as pilot:
        await open_screen(app, pilot, clock, "f", FlagPanel, lambda panel: panel.catalog)
        panel = app.screen
        assert not panel.query_one("#remedy").display
        restarts = []
        panel._restart = lambda target, title: restarts.append(target)
        await pilot.press("F")
        status = panel.query_one("#flag-status")
        await until(pilot, lambda: status.display)
        assert "no crash with a known fix" in text(status) and restarts == []
