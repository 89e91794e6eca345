"""The log view's own behaviour, and the helpers that keep the dashboard cheap to draw."""

from pathlib import Path

from textual.app import App, ComposeResult

from sgwatch.ui.widgets.chart import envelope
from sgwatch.ui.widgets.logpane import _ERROR, _WARNING, LogHighlighter, level_of
from sgwatch.ui.widgets.logview import CALM_LINES, LogView
from tests.conftest import FIXTURES, until

SAMPLE = Path(__file__).resolve().parents[2] / "app/samples/qwen27b-tp2-warmup.log"


class OneLog(App[None]):
    def compose(self) -> ComposeResult:
        yield LogView(LogHighlighter(), max_lines=100)


def test_level_of_agrees_with_the_patterns_alone():
    lines = SAMPLE.read_text(errors="replace").splitlines()
    for path in sorted((FIXTURES / "sglang").glob("*.log")):
        lines += path.read_text(errors="replace").splitlines()
    lines += ["ValueError: x", "a RuntimeWarning: y", "CUDA out of memory", "fine"]
    for line in lines:
        want = 2 if _ERROR.search(line) else 1 if _WARNING.search(line) else 0
        assert level_of(line) == want, line


def test_envelope_keeps_every_peak_in_order():
    ys = [float(i % 7) for i in range(1000)]
    ys[500] = 99.0
    xs, cut = envelope(list(range(1000)), ys, 40)
    assert len(xs) <= 40 and xs == sorted(xs)
    assert max(cut) == 99.0 and min(cut) == 0.0
    assert envelope([1.0, 2.0], [3.0, 4.0], 40) == ([1.0, 2.0], [3.0, 4.0])


async def test_follows_prunes_and_keeps_the_readers_place():
    app = OneLog()
    async with app.run_test(size=(60, 12)) as pilot:
        log = app.query_one(LogView)
        log.add_lines([f"line {i}" for i in range(80)] + [""])  # a blank line is kept
        await pilot.pause()
        assert log.lines[-1] == "" and log.is_vertical_scroll_end and log.following
        log.scroll_to(y=30, animate=False)
        await pilot.pause()
        assert not log.following
        top = log.lines[int(log.scroll_y)]
        log.add_lines([f"more {i}" for i in range(40)])  # 20 old lines pruned
        log.flush()
        await pilot.pause()
        assert len(log.lines) == 100 and log.lines[0] == "line 21"
        assert log.lines[int(log.scroll_y)] == top  # the same line stays at the top


async def test_a_flood_is_written_in_batches_and_all_of_it_arrives():
    app = OneLog()
    async with app.run_test(size=(60, 12)) as pilot:
        log = app.query_one(LogView)
        log.add_lines([f"a {i}" for i in range(CALM_LINES + 1)])  # written at once
        log.add_lines([f"b {i}" for i in range(CALM_LINES + 1)])  # held back a moment
        assert log.lines[-1] == f"a {CALM_LINES}"
        await until(pilot, lambda: log.lines[-1] == f"b {CALM_LINES}")  # the batch's timer
        assert len(log.lines) == 100
        assert log.is_vertical_scroll_end
