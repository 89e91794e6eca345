"""Redraw a widget only when what it shows changed: the frame timer runs ~12 times a
second, and an unconditional `Static.update` costs a layout pass every time."""

from __future__ import annotations

from typing import Any

from textual.widgets import Static


def show(widget: Static, content: Any) -> None:
    if getattr(widget, "_sgwatch_shown", None) != content:
        widget._sgwatch_shown = content
        widget.update(content)
