"""Redraw a widget only when what it shows changed, and without a layout pass when
its size cannot have changed: the frame timer runs ~12 times a second, and each
layout pass re-measures the whole screen (the most expensive thing a frame does).
Nothing is drawn in a hidden tab at all (`hidden`)."""

from __future__ import annotations

from typing import Any

from textual.widget import Widget
from textual.widgets import Static, TabPane


def show(widget: Static, content: Any) -> None:
    old = getattr(widget, "_sgwatch_shown", None)
    if old == content:
        return
    widget._sgwatch_shown = content
    layout = old is None or _shape(old, widget) != _shape(content, widget)
    widget.update(content, layout=layout)


def _shape(content: Any, widget: Static | None = None) -> tuple[int, bool]:
    """(lines, whether a line is too wide to fit without wrapping)."""
    lines = str(content).split("\n")
    width = widget.content_size.width if widget is not None else 0
    return len(lines), bool(width) and max(map(len, lines)) > width


def hidden(widget: Widget) -> bool:
    """In a tab that is not the one chosen. Its widgets are left as they are until it is:
    after any change to a widget it does not show, Textual rebuilds its map of the whole
    screen at the next frame (a hidden host's log did that ~10 times a second)."""
    parent = widget.parent
    return isinstance(parent, TabPane) and not parent.display
