"""Textual's compositor maps freed when the next one replaces them.

Each layout of the screen (a resize, the layout key, a widget shown or hidden) builds
a map of every widget's place: a dict of `MapGeometry` tuples with their
regions and sizes, about 150 entries here. Textual fills it from a recursive inner
function, which holds itself through its closure: a reference cycle that also holds the
map and the set of widgets it filled. So every map replaced waited for a full
collection. In the soak they were most of the cyclic garbage once the strips' cycle was
gone (ui/strips.py): 0.5-1.2 MB a minute, piling up for the 4-5 minutes between Python's
own full passes, and such peaks are what Python's arenas keep for good
(docs/design/memory.md; measured in docs/RELIABILITY.md).

`free_promptly()` makes the compositor hand out copies of the map and the set and empty
the ones the cycle holds: the cycle keeps two empty containers, and a replaced map goes
as soon as nothing uses it. For the Textual it was checked against (whose arrangement
returns the map and set it built and keeps no other reference to them); another is left
as it is, and tests/ui/test_maps.py says so.
"""

from __future__ import annotations

from textual._compositor import Compositor, CompositorMap
from textual.geometry import Size
from textual.widget import Widget

from sgwatch.ui.patching import install

TEXTUALS = Compositor._arrange_root


def _arrange_root(
    self: Compositor, root: Widget, size: Size, visible_only: bool = True
) -> tuple[CompositorMap, set[Widget]]:
    built, widgets = TEXTUALS(self, root, size, visible_only)
    out = dict(built), set(widgets)
    built.clear()  # the inner function's cycle keeps these two: empty, they hold nothing
    widgets.clear()
    return out


def free_promptly() -> bool:
    """Maps built from now on are freed when replaced; whether this Textual's compositor
    is the one known (else nothing changes)."""
    return install(Compositor, "_arrange_root", _arrange_root)
