"""A refused change on a small terminal: at 100x30 the refusal is on screen and names
the flag that asked for what is missing (the demo's own parser judges it)."""

from textual.widgets import Static

from sgwatch.cli.dashboard import demo_session
from sgwatch.control.controller import Controller
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.modals import ConfirmRestart
from tests.conftest import until
from tests.e2e.test_demo import leftovers
from tests.e2e.test_flag_panel import find_flag
from tests.integration import helpers


async def test_a_refusal_at_100x30_is_on_screen_and_names_the_flag(demo):
    session = demo_session(demo)
    watch = session.watch
    app = SgwatchApp([watch], [lambda _w: session.run()], controllers=[Controller(session)])
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            panel = await find_flag(app, pilot, session, "--language-only")
            await pilot.press("space", "R")
            status = panel.query_one("#flag-status", Static)
            await until(pilot, lambda: "refused" in status.render().plain)
            text = status.render().plain
            assert "--language-only: " in text and "--encoder-urls" in text
            assert not isinstance(app.screen, ConfirmRestart)
            # Drawn within the screen, above the footer: R visibly did something.
            region = status.region
            assert region.height >= 2 and region.bottom <= 29
            assert session.server.pid == demo.proc.pid  # the server was not touched
    finally:
        demo.stop(session.server.pid if session.server else None)
    await helpers.until(lambda: leftovers(demo.folder) == [])
