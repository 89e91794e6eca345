"""LRU caches emptied without a ring left for the collector (ui/rings.py)."""

from textual.app import App, ComposeResult
from textual.cache import LRUCache
from textual.strip import Strip

from sgwatch.ui import rings
from sgwatch.ui.widgets.logpane import LogHighlighter
from sgwatch.ui.widgets.logview import LogView
from tests.ui.garbage import Change, left_and_shown_with


class OneLog(App[None]):
    def compose(self) -> ComposeResult:
        yield LogView(LogHighlighter(), max_lines=200)


def rehighlighted(app: App) -> Change:
    log = app.query_one(LogView)
    log.add_lines([f"INFO line {i} Decode batch" for i in range(150)])
    return lambda _: log.rehighlight()


async def cyclic_strips(clear) -> tuple[int, list[str]]:
    """Strips only a full collection frees after a log view's cache was emptied 10 times
    (as a search's new term empties it), and the screen's text."""
    return await left_and_shown_with(
        (LRUCache, "clear", clear),
        rings.free_promptly,
        OneLog(),
        (80, 24),
        Strip,
        rehighlighted,
        10,
    )


async def test_an_emptied_cache_frees_its_lines_at_once_and_the_screen_is_the_same():
    textuals, textuals_screen = await cyclic_strips(rings.TEXTUALS)
    ours, screen = await cyclic_strips(rings._clear)
    assert textuals >= 10 * 20  # each emptying: every visible line's strip
    assert ours == 0
    assert screen == textuals_screen


def test_a_cache_emptied_works_as_before():
    rings.free_promptly()
    cache: LRUCache[int, str] = LRUCache(3)
    for round_ in range(3):
        for k in range(5):
            cache[k] = f"{round_}.{k}"
        assert list(cache.keys()) == [2, 3, 4]
        assert cache.get(3) == f"{round_}.3" and cache.get(0) is None
        cache.clear()
        assert len(cache) == 0 and cache.get(3) is None


def test_the_pinned_textual_is_the_one_checked():
    # A Textual whose LRUCache changed is left as it is: check it again, then pin it.
    assert rings.free_promptly()
