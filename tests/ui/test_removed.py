"""A removed widget freed when it goes, not at a full collection (ui/removed.py)."""

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from sgwatch.ui import leftopen, removed
from tests.ui.garbage import Change, left_and_shown_with


class Notes(App[None]):
    def compose(self) -> ComposeResult:
        yield Vertical(Static("the dashboard"))


def mounted_and_removed(app: App) -> Change:
    """Each change removes what the last one mounted and mounts a note, as a toast comes
    and goes."""
    box = app.query_one(Vertical)

    def change(k: int) -> None:
        for old in box.query(".note"):
            old.remove()
        box.mount(Vertical(Static(f"ready {k}"), Static("in 2m24s"), classes="note"))

    return change


async def cyclic_widgets(exit_) -> tuple[int, list[str]]:
    """Widgets only a full collection frees after 10 notes came and went, and the
    screen's text."""
    leftopen.prepare()  # the rest as the dashboard has it: no other cycle holds them
    return await left_and_shown_with(
        (Widget, "_message_loop_exit", exit_),
        removed.free_promptly,
        Notes(),
        (60, 10),
        Widget,
        mounted_and_removed,
        10,
    )


async def test_a_removed_widget_goes_at_once_and_the_screen_is_the_same():
    textuals, textuals_screen = await cyclic_widgets(removed.TEXTUALS)
    ours, screen = await cyclic_widgets(removed._message_loop_exit)
    assert textuals >= 9 * 3  # each note removed: its box and two labels
    assert ours == 0
    assert screen == textuals_screen


def test_the_pinned_textual_is_the_one_checked():
    # A Textual whose widget removal changed is left as it is: check it again, then pin it.
    assert removed.free_promptly()
