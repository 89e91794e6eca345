"""A removed widget freed when it goes, not at a full collection.

Textual undoes most of what a widget holds as it leaves the DOM, but not three cycles:
its two style sets refer back to it, each part styled apart (an input's cursor,
placeholder) has a node and styles that refer to each other (ui/components.py), and
its box-model cache is an LRU ring. So each removed widget, with its caches, waited for
a full collection. The dashboard removes a widget at every notification it takes down:
a ready or a crash toast left about 23 KiB each for the collector (docs/design/memory.md).

`free_promptly()` makes a widget's removal undo the three once Textual's own part is done.
For the Textual it was checked against (whose removed widgets are never mounted again);
another is left as it is, and tests/ui/test_removed.py says so.
"""

from __future__ import annotations

from textual.widget import Widget

from sgwatch.ui import components
from sgwatch.ui.patching import install

TEXTUALS = Widget._message_loop_exit


async def _message_loop_exit(self: Widget) -> None:
    parts = list(self._component_styles.values())  # Textual drops the table, not the cycle
    await TEXTUALS(self)
    self._css_styles.node = None
    self._inline_styles.node = None
    for styles in parts:
        components.let_go(styles)
    self._box_model_cache.clear()  # ring undone link by link (ui/rings.py)


def free_promptly() -> bool:
    """Widgets removed from now on go at once; whether this Textual's widget is the one
    known (else nothing changes)."""
    return install(Widget, "_message_loop_exit", _message_loop_exit)
