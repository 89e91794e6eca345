"""A tab that is not shown draws nothing, and shows everything once it is chosen."""

import time
from pathlib import Path

from textual._compositor import Compositor
from textual.widgets import Static, TabbedContent

from sgwatch.live.watch import Watch
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.overview import Overview
from sgwatch.ui.widgets.logpane import SCROLLBACK
from sgwatch.ui.widgets.logview import LogView
from tests.conftest import Clock, settle

SIZE = (140, 45)
SAMPLE = Path(__file__).resolve().parents[2] / "app/samples/qwen27b-tp2-warmup.log"


def lines(first: int, count: int) -> list[str]:
    return [f"[2026-01-01 10:00:00] line {i}" for i in range(first, first + count)]


def two_hosts() -> tuple[SgwatchApp, Clock, Watch, Watch]:
    """The dashboard over two hosts, on a clock the test moves."""
    clock, hosts = Clock(), [Watch("ct129"), Watch("ct130")]
    return SgwatchApp(hosts, clock=clock), clock, *hosts


def feed(w: Watch, batch: list[str]) -> None:
    w.feed("".join(f"{line}\n" for line in batch).encode())


def count_maps(monkeypatch) -> list[int]:
    """A list that grows by one at each map of the whole screen Textual builds."""
    built: list[int] = []
    arrange = Compositor._arrange_root  # the app installed its own (ui/maps.py)

    def counted(self, *args, **kwargs):
        built.append(1)
        return arrange(self, *args, **kwargs)

    monkeypatch.setattr(Compositor, "_arrange_root", counted)
    return built


async def laid_out(pilot, built: list[int]) -> None:
    """Wait until a pause passes with no map of the screen built."""
    deadline = time.monotonic() + 30
    await pilot.pause(0.3)
    while built:
        if time.monotonic() > deadline:
            raise AssertionError("the screen was still laid out again after 30 s")
        built.clear()
        await pilot.pause(0.3)


async def test_a_hidden_hosts_lines_all_show_in_order_when_its_tab_is_chosen():
    app, clock, _, other = two_hosts()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("1")
        sent: list[str] = []
        for start in range(0, 600, 60):  # over many frames
            batch = lines(start, 60)
            feed(other, batch)
            sent += batch
            await settle(app, pilot, clock)
        app.query_one(TabbedContent).active = "host-1"  # as a click on the tab does
        log = app.query_one("#host-1 LogView", LogView)
        assert log.lines == sent  # in the same step: no frame shows the tab behind
        await pilot.pause()
        assert log.lines == sent  # each line once, in order, no "lines skipped"
        assert log.following and log.is_vertical_scroll_end


async def test_a_hidden_host_holds_one_scrollback_and_shows_its_newest():
    app, clock, _, other = two_hosts()
    async with app.run_test(size=SIZE) as pilot:
        sent = lines(0, SCROLLBACK)
        feed(other, sent)  # written while its tab was shown
        await pilot.press("2")
        await settle(app, pilot, clock)
        await pilot.press("1")
        log = app.query_one("#host-1 LogView", LogView)
        for start in range(SCROLLBACK, 3 * SCROLLBACK, 1000):
            feed(other, batch := lines(start, 1000))
            sent += batch
            await settle(app, pilot, clock)
            assert len(log.lines) + len(log._pending) <= SCROLLBACK  # not two while hidden
        await pilot.press("2")
        assert log.lines == sent[-SCROLLBACK:]


async def test_lines_for_a_hidden_tab_cost_no_map_of_the_screen(monkeypatch):
    """Textual rebuilds its map of the whole screen at the next frame after a widget
    it does not show changed: with the hidden host drawn, once a frame."""
    app, clock, shown, other = two_hosts()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("1")
        await settle(app, pilot, clock)
        built = count_maps(monkeypatch)
        await laid_out(pilot, built)  # the switch's own layouts end first (late under load)
        for n in range(20):
            feed(other, lines(20 * n, 20))
            feed(shown, lines(n, 1))  # a frame is drawn on the shown tab each time
            await settle(app, pilot, clock)
        assert app.query_one("#host-0 LogView", LogView).lines == lines(0, 20)
        assert built == []


async def test_a_hidden_log_read_up_costs_no_map_and_keeps_the_readers_place(monkeypatch):
    """Its oldest lines pruned as new ones are held, its reader's place moves with
    them only when it is drawn again."""
    app, clock, shown, other = two_hosts()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        feed(other, lines(0, SCROLLBACK))
        await settle(app, pilot, clock)
        log = app.query_one("#host-1 LogView", LogView)
        log.scroll_to(y=3000, animate=False)
        await settle(app, pilot, clock)
        assert not log.following
        top = log.lines[int(log.scroll_y)]
        await pilot.press("1")
        await settle(app, pilot, clock)
        built = count_maps(monkeypatch)
        for n in range(20):  # 2,000 of the oldest pruned, above the reader's place
            feed(other, lines(SCROLLBACK + 100 * n, 100))
            feed(shown, lines(n, 1))
            await settle(app, pilot, clock)
        assert built == []
        await pilot.press("2")
        await settle(app, pilot, clock)
        assert log.lines[0] == lines(2000, 1)[0] and not log.following
        assert log.lines[int(log.scroll_y)] == top


async def test_the_overview_is_current_when_chosen_after_hosts_changed_behind_it():
    app, clock, _, second = two_hosts()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        await pilot.press("1")
        second.feed(SAMPLE.read_bytes())  # a whole warmup, while the overview is hidden
        await settle(app, pilot, clock)
        clock.advance(300)  # looked at five minutes later
        await pilot.press("0")
        assert app.query_one(TabbedContent).active == "overview"
        table = app.query_one(Overview).table
        assert table.text("1", "state") == "▶ serving · ready in 2m24s"
        assert table.text("1", "since").startswith("5m")  # since the change, not the look
        assert table.text("1", "") == ""  # its mark (10 s) is long gone


async def test_a_hidden_hosts_batch1_decode_lines_are_all_measured():
    app, clock, _, other = two_hosts()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("1")
        other.feed(SAMPLE.read_bytes())
        other.feed_gpu(b"0, NVIDIA H100 80GB HBM3, 87, 61234, 81559, 312.50, 64\n")
        await settle(app, pilot, clock)
        for i in range(10):  # one a frame, as a quiet server at batch 1 writes them
            feed(
                other,
                [
                    f"[2026-11-30 10:20:{10 + i:02d} TP0] Decode batch, #running-req: 1,"
                    f" #token: 952, token usage: 0.00, cuda graph: True,"
                    f" gen throughput (token/s): {60 + i}.00, #queue-req: 0"
                ],
            )
            await settle(app, pilot, clock)
        await pilot.press("2")
        roof = str(app.query_one("#host-1 #tput-roof", Static).render())
        assert "median of 10" in roof or "median of 11" in roof, roof


async def test_a_tab_key_under_a_maximised_panel_shows_the_tab():
    app, clock, _, other = two_hosts()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("1")
        await settle(app, pilot, clock)
        await pilot.press("m")  # the log, maximised
        assert app.screen.maximized is not None
        await pilot.press("2")
        assert app.screen.maximized is None
        feed(other, lines(0, 5))
        await settle(app, pilot, clock)
        assert app.query_one("#host-1 LogView", LogView).lines == lines(0, 5)
