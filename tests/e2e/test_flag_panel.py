"""The flag loop on the demo: f, find a flag, toggle it, R, confirm -> the server runs it."""

import asyncio
from pathlib import Path

from textual.widgets import DataTable

from sgwatch.cli.dashboard import demo_session
from sgwatch.control.controller import Controller
from sgwatch.sim.demo import traffic
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.flagpanel import FlagPanel
from sgwatch.ui.modals import ConfirmRestart
from tests.conftest import until
from tests.e2e.test_demo import leftovers
from tests.integration import helpers


def cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


async def test_toggle_a_flag_and_restart_from_the_panel(demo):
    session = demo_session(demo)
    watch = session.watch
    ctl = Controller(session)
    pump = lambda _w: asyncio.gather(session.run(), traffic(demo))  # noqa: E731
    app = SgwatchApp([watch], [pump], controllers=[ctl])
    try:
        await _restart_from_the_panel(app, session, watch, demo)
    finally:  # the restarted server too, whatever happened
        demo.stop(session.server.pid if session.server else None)
    await helpers.until(lambda: leftovers(demo.folder) == [])  # each process gone


async def _restart_from_the_panel(app, session, watch, demo) -> None:
    async with app.run_test(size=(140, 45)) as pilot:
        panel = await find_flag(app, pilot, session, "--enable-metrics")
        await pilot.press("space")
        assert panel.query_one("#pending").render().plain.startswith("+ --enable-metrics")
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmRestart))
        assert "--enable-metrics" in app.screen.command
        await pilot.press("y")
        await until(pilot, lambda: session.server.pid != demo.proc.pid)
        new_pid = session.server.pid
        assert not isinstance(app.screen, FlagPanel)  # back on the dashboard, watching
        await until(pilot, lambda: watch.state.args.get("enable_metrics") is True)
        assert cmdline(new_pid)[-1] == "--enable-metrics"
        assert demo.proc.poll() is not None  # the old server is gone
        # the demo's traffic goes on to the new server: it serves
        await until(pilot, lambda: watch.state.throughput.samples > 0)


async def find_flag(app, pilot, session, flag: str) -> FlagPanel:
    """Once the server's settings are read: f, search for `flag`, the cursor on its row."""
    await until(pilot, lambda: session.server is not None and session.watch.state.args)
    await pilot.press("f")
    await until(pilot, lambda: isinstance(app.screen, FlagPanel) and app.screen.catalog)
    panel = app.screen
    await pilot.press("slash", *flag.removeprefix("--"), "enter")
    table = panel.query_one(DataTable)
    await until(pilot, lambda: flag in [k.value for k in table.rows])
    table.move_cursor(row=table.get_row_index(flag))
    return panel
