"""The dashboard over the log of a server that is gone, which ended serving without a
crash: STOPPED with where its log ends, not a server still serving."""

from __future__ import annotations

from textual.widgets import Static

from sgwatch.live.watch import Watch
from sgwatch.ui.widgets.header import HostHeader
from tests.conftest import settle
from tests.ui.test_dashboard import SIZE, dashboard, text
from tests.unit.test_writer_gone import SERVING


async def test_a_gone_servers_serving_log_shows_stopped_and_why():
    w = Watch("ct129")
    w.writer_gone = True  # the session's choice: no running server writes it
    w.feed(SERVING)
    w.caught_up = True
    app, clock = dashboard(w)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        header = text(app.query_one(HostHeader))
        assert "■ STOPPED" in header and "SERVING" not in header
        note = text(app.query_one("#note", Static))
        assert "server gone; its log ends serving at 08:03:12, no crash" in note
