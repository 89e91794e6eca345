"""A tab that is not shown draws nothing, and shows everything once it is chosen."""

from pathlib import Path

from textual._compositor import Compositor
from textual.widgets import TabbedContent

from sgwatch.live.watch import Watch
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.overview import Overview
from sgwatch.ui.widgets.logview import LogView
from tests.conftest import Clock, settle

SIZE = (140, 45)
SAMPLE = Path(__file__).resolve().parents[2] / "app/samples/qwen27b-tp2-warmup.log"


def lines(first: int, count: int) -> list[str]:
    return [f"[2026-01-01 10:00:00] line {i}" for i in range(first, first + count)]


def feed(w: Watch, batch: list[str]) -> None:
    w.feed("".join(f"{line}\n" for line in batch).encode())


async def test_a_hidden_hosts_lines_all_show_in_order_when_its_tab_is_chosen():
    shown, other = Watch("ct129"), Watch("ct130")
    clock = Clock()
    app = SgwatchApp([shown, other], clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("1")
        sent: list[str] = []
        for start in range(0, 600, 60):  # over many frames
            batch = lines(start, 60)
            feed(other, batch)
            sent += batch
            await settle(app, pilot, clock)
        await pilot.press("2")
        log = app.query_one("#host-1 LogView", LogView)
        assert log.lines == sent  # each line once, in order, no "lines skipped"
        assert log.following and log.is_vertical_scroll_end


async def test_lines_for_a_hidden_tab_cost_no_map_of_the_screen(monkeypatch):
    """Textual rebuilds its map of the whole screen at the next frame after a widget
    it does not show changed: with the hidden host drawn, once a frame."""
    shown, other = Watch("ct129"), Watch("ct130")
    clock = Clock()
    app = SgwatchApp([shown, other], clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("1")
        await settle(app, pilot, clock)
        built = []
        arrange = Compositor._arrange_root  # the app installed its own (ui/maps.py)

        def counted(self, *args, **kwargs):
            built.append(1)
            return arrange(self, *args, **kwargs)

        monkeypatch.setattr(Compositor, "_arrange_root", counted)
        for n in range(20):
            feed(other, lines(20 * n, 20))
            feed(shown, lines(n, 1))  # a frame is drawn on the shown tab each time
            await settle(app, pilot, clock)
        assert app.query_one("#host-0 LogView", LogView).lines == lines(0, 20)
        assert built == []


async def test_the_overview_is_current_when_chosen_after_hosts_changed_behind_it():
    first, second = Watch("ct129"), Watch("ct130")
    clock = Clock()
    app = SgwatchApp([first, second], clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        await pilot.press("1")
        second.feed(SAMPLE.read_bytes())  # a whole warmup, while the overview is hidden
        await settle(app, pilot, clock)
        await pilot.press("0")
        assert app.query_one(TabbedContent).active == "overview"
        table = app.query_one(Overview).table
        assert table.text("1", "state") == "▶ serving · ready in 2m24s"
