"""Styles of a widget's parts freed when the widget is styled again, not at a full
collection.

A widget with parts styled apart (its component classes: an input's cursor, placeholder
and selection) has each part's styles worked out on a node of its own that Textual makes
for the purpose, again at every restyle (a focus, a class added or removed). The node
and its styles refer to each other: a reference cycle, so each set replaced waits for a
full collection. Opening and closing the log's search left about 100 KiB of them each
time (16 such nodes, each with its styles, bindings, signals and caches), most of the
cyclic garbage a full pass finds in the soak (docs/design/memory.md).

`free_promptly()` makes the restyle undo the cycle of each set it replaced: the old node
goes at once. For the Textual it was checked against (whose nodes keep the parts' styles
only in the widget's own table); another is left as it is, and tests/ui/test_components.py
says so.
"""

from __future__ import annotations

from textual.css.styles import RenderStyles
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode

from sgwatch.ui.patching import install

TEXTUALS = Stylesheet._process_component_classes


def _process_component_classes(self: Stylesheet, node: DOMNode) -> None:
    replaced = list(node._component_styles.values())
    TEXTUALS(self, node)
    kept = {id(styles) for styles in node._component_styles.values()}
    for styles in replaced:
        if id(styles) not in kept:  # its node is held only by these two
            let_go(styles)


def let_go(styles: RenderStyles) -> None:
    """Undo the cycle of a part's styles with the node Textual made to style it."""
    styles.base.node = None
    styles.inline.node = None


def free_promptly() -> bool:
    """Parts' styles replaced from now on go at once; whether this Textual's stylesheet
    is the one known (else nothing changes)."""
    return install(Stylesheet, "_process_component_classes", _process_component_classes)
