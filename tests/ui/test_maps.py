"""Compositor arrangements freed when replaced, not at a full collection (ui/maps.py)."""

from types import FunctionType

from textual._compositor import Compositor
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.map_geometry import MapGeometry
from textual.widgets import Log, Static

from sgwatch.ui import maps
from tests.ui.garbage import Change, left_and_shown_with


class Grid(App):
    def compose(self) -> ComposeResult:
        with Vertical():
            for i in range(4):
                with Horizontal():
                    yield from (Static(f"{i}.{j}") for j in range(5))
            yield Log()


def relaid(app: App) -> Change:
    box = app.query_one(Vertical)
    return lambda k: setattr(box.styles, "layout", "horizontal" if k % 2 else "vertical")


async def left_after_20_layouts(arrange, kind: type) -> tuple[int, list[str]]:
    """Objects of `kind` only a full collection frees after 20 layouts, and the screen's
    text."""
    return await left_and_shown_with(
        (Compositor, "_arrange_root", arrange),
        maps.free_promptly,
        Grid(),
        (100, 30),
        kind,
        relaid,
        20,
    )


async def test_a_replaced_map_goes_when_dropped_and_the_screen_is_the_same():
    textuals, textuals_screen = await left_after_20_layouts(maps.TEXTUALS, MapGeometry)
    ours, screen = await left_after_20_layouts(maps._arrange_root, MapGeometry)
    assert textuals > 20 * 25  # each layout's map, a geometry per widget
    assert ours == 0
    assert screen == textuals_screen


async def test_the_arrangements_inner_function_goes_with_it():
    textuals, _ = await left_after_20_layouts(maps.TEXTUALS, FunctionType)
    ours, _ = await left_after_20_layouts(maps._arrange_root, FunctionType)
    assert textuals >= 20  # at least one arrangement a layout, each its own closure
    assert ours == 0


def test_the_pinned_textual_is_the_one_checked():
    # A Textual whose compositor changed is left as it is: check it again, then pin it.
    assert maps.free_promptly()
