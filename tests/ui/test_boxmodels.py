"""Each widget keeps its last few box models, not sixteen stale ones (ui/boxmodels.py)."""

import inspect

import textual.widget
from textual.cache import LRUCache
from textual.containers import Vertical
from textual.widget import Widget

from sgwatch.ui import boxmodels
from tests.ui.garbage import replacing
from tests.ui.test_maps import Grid


async def kept_after_resizes(make_cache) -> tuple[int, int, list[str]]:
    """Box models cached after 20 terminal sizes and layouts, the widgets, and the
    screen's text."""
    with replacing(textual.widget, "LRUCache", make_cache, boxmodels.keep_fewer):
        app = Grid()
        async with app.run_test(size=(100, 30)) as pilot:
            box = app.query_one(Vertical)
            for k in range(20):
                await pilot.resize_terminal(100 + k, 30)
                box.styles.layout = "horizontal" if k % 2 else "vertical"
                await pilot.pause()
            widgets = list(app.query(Widget))
            cached = sum(len(w._box_model_cache) for w in widgets)
            lines = app.screen._compositor.render_strips()
            return cached, len(widgets), [line.text for line in lines]


async def test_a_widget_keeps_its_last_few_box_models_and_the_screen_is_the_same():
    textuals, widgets, textuals_screen = await kept_after_resizes(LRUCache)
    ours, _, screen = await kept_after_resizes(boxmodels._box_models)
    assert textuals > 8 * widgets  # Textual's keeps up to 16 a widget, most never asked again
    assert ours <= boxmodels.KEPT * widgets
    assert screen == textuals_screen


def test_the_pinned_textual_makes_only_the_box_model_cache_with_it():
    # Another version is left as it is: check it again (what else the widget module makes
    # with LRUCache), then pin it.
    source = inspect.getsource(textual.widget)
    assert source.count("LRUCache(") == 1
    assert "_box_model_cache: LRUCache[object, BoxModel] = LRUCache(16)" in source
    assert boxmodels.keep_fewer()
