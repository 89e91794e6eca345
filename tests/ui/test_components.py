"""A widget's parts' styles freed when it is styled again (ui/components.py)."""

from textual.app import App, ComposeResult
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.widgets import Input

from sgwatch.ui import components
from tests.ui.garbage import Change, left_and_shown_with


class Search(App[None]):
    CSS = "Input.open { border: heavy red; }"

    def compose(self) -> ComposeResult:
        yield Input(placeholder="search the log", value="Decode batch")


def toggled(app: App) -> Change:
    search = app.query_one(Input)
    return lambda k: search.set_class(k % 2 == 0, "open")


async def cyclic_nodes(process) -> tuple[int, list[str]]:
    """Nodes only a full collection frees after an input was opened and closed 10 times
    (as the log's search is), and the screen's text."""
    return await left_and_shown_with(
        (Stylesheet, "_process_component_classes", process),
        components.free_promptly,
        Search(),
        (60, 8),
        DOMNode,
        toggled,
        10,
    )


async def test_a_restyled_inputs_parts_go_at_once_and_the_screen_is_the_same():
    textuals, textuals_screen = await cyclic_nodes(components.TEXTUALS)
    ours, screen = await cyclic_nodes(components._process_component_classes)
    assert textuals >= 10 * 3  # each restyle: a node per part (cursor, placeholder, ...)
    assert ours == 0
    assert screen == textuals_screen


async def test_a_restyled_input_still_draws_its_parts():
    components.free_promptly()
    app = Search()
    async with app.run_test(size=(60, 8)) as pilot:
        search = app.query_one(Input)
        for k in range(4):
            search.set_class(k % 2 == 0, "open")
            await pilot.pause()
        assert search.get_component_rich_style("input--cursor") is not None
        search.value = ""
        await pilot.pause()
        assert "search the log" in "".join(s.text for s in app.screen._compositor.render_strips())


def test_the_pinned_textual_is_the_one_checked():
    # A Textual whose stylesheet changed is left as it is: check it again, then pin it.
    assert components.free_promptly()
