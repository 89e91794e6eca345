"""Textual's rendered lines without their seven memo caches each.

Every `Strip` (a rendered line; a frame derives several per widget line: cropped,
offset, styled) makes seven `FIFOCache`s as it is made, each an object and an empty
dict, about 0.9 KB a strip, and keeps in them the strips derived from it. A census of
the dashboard in the soak counted 11,900 strips and 70,000 such caches, most of them
never used: about 10 MB of the 60-66 MiB Python held, made and freed again with every
frame. Python's small-object allocator keeps an arena while one object in it lives, so
that churn is also what raises the dashboard's memory for good (docs/RELIABILITY.md).
Without the caches a derived strip is made again when asked for again: in the demo
side by side, half the live objects and 8 MiB less held, keys no slower on a quiet
machine; in the soak, 13 MB less, but keys slower towards the end on a machine loaded
to 40-60 (a trade-off still to settle, docs/RELIABILITY.md).

`lighten()` makes strips with no caches, for the Textual whose `Strip` it was checked
against (the version in constraints.txt: its strips only `get` and set their caches'
items); another is left as it is, and tests/ui/test_strips.py says so.
"""

from __future__ import annotations

from collections.abc import Iterable

import textual
from rich.segment import Segment
from textual.strip import Strip

CHECKED = "8.2.8"
CACHES = (
    "_divide_cache",
    "_crop_cache",
    "_style_cache",
    "_filter_cache",
    "_line_length_cache",
    "_crop_extend_cache",
    "_offsets_cache",
)


class _NoCache:
    """A cache that keeps nothing: Strip only asks it `get` and sets an item."""

    __slots__ = ()

    def get(self, key: object, default: None = None) -> None:
        return default

    def __setitem__(self, key: object, value: object) -> None:
        pass


NO_CACHE = _NoCache()
TEXTUALS = Strip.__init__  # the soak's baseline puts it back (bench/soak_app.py)


def _init(self: Strip, segments: Iterable[Segment], cell_length: int | None = None) -> None:
    self._segments = list(segments)
    self._cell_length = cell_length
    for name in CACHES:
        setattr(self, name, NO_CACHE)
    self._render_cache = None
    self._link_ids = None
    self._cell_count = None


def lighten() -> bool:
    """Strips made from now on have no caches; whether this Textual's Strip is the one
    known (else nothing changes)."""
    if Strip.__init__ is _init:
        return True
    if textual.__version__ != CHECKED:
        return False
    Strip.__init__ = _init
    return True
