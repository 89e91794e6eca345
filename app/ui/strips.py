"""Textual's rendered lines with two of their seven memo caches, and no cycle.

Every `Strip` (a rendered line; a frame derives several per widget line: cropped,
offset, styled) makes seven `FIFOCache`s as it is made, each an object and an empty
dict, about 0.13 KB each, and keeps in them the strips derived from it. A census of
the dashboard in the soak counted 11,900 strips and 70,000 such caches, most of them
never used, made and freed again with every frame. Python's small-object allocator
keeps an arena while one object in it lives, so that churn is also what raises the
dashboard's memory for good (docs/RELIABILITY.md).

Counted in the UI flood bench, only two caches are ever hit: each frame divides and
filters again the strips the widgets keep (hit 4 times in 5). Without them an idle
dashboard costs 1.4x the CPU; the other five (crop, crop-extend, offsets, style, line
length) were hit in under 4 % of their lookups. So strips keep those two and make no
others: 5.6 MB less after a flood than with all seven, keys faster (p95 0.78x), idle
CPU the same (0.94x; an A/B of 6 pairs, docs/RELIABILITY.md).

Those two are not Textual's `FIFOCache`s either (an object and a dict each, which
outweighed the strip they served) but `_Recent`: the last two values set. Counted
over feeding, layout and tab keys and a search, a filter was always asked again for
its last value and a divide for one of its last two (a third of the divides reused
the one before the last). Measured: 1,000 strips hold 15 % less, the UI flood bench's
idle CPU 0.93x (0.87-0.97, 5 pairs), frames with layout keys 0.96x the CPU.

Textual's `divide` also keeps `[self]` in the strip's own cache when the cut is the
whole strip (every line a widget draws alone, on every frame): a reference cycle, so
each such strip, its segments and its caches wait for a full collection instead of
going when the frame drops them. They were most of the demo's cyclic garbage, and in
the soak the garbage a full pass freed fell from 4.0-5.4 to 2.2-4.5 MiB without them:
such piles are peaks, which Python's arenas keep for good. Here a strip cut whole
returns `[self]` without keeping it (as cheap as the lookup it replaces).

`lighten()` makes such strips, for the Textual whose `Strip` it was checked against
(the version in constraints.txt: its strips only `get` and set their caches' items);
another is left as it is, and tests/ui/test_strips.py says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.segment import Segment
from textual.strip import Strip

from sgwatch.ui.patching import install

LEFT_OUT = (
    "_crop_cache",
    "_style_cache",
    "_line_length_cache",
    "_crop_extend_cache",
    "_offsets_cache",
)


class _NoCache:
    """A cache that keeps nothing: Strip only asks its caches `get` and sets an item."""

    __slots__ = ()

    def get(self, key: object, default: None = None) -> None:
        return default

    def __setitem__(self, key: object, value: object) -> None:
        pass


NO_CACHE = _NoCache()
TEXTUALS = Strip.__init__  # put back by restore()
TEXTUALS_DIVIDE = Strip.divide


class _Recent:
    """The last two values set, by key: what a strip's divide and filter caches are
    asked for again (the same cuts, or two sets of cuts alternating)."""

    __slots__ = ("_key", "_key2", "_value", "_value2")

    def __init__(self) -> None:
        self._key = self._value = self._key2 = self._value2 = None

    def get(self, key: object, default: None = None) -> object:
        if key == self._key:
            return self._value
        if key == self._key2:
            return self._value2
        return default

    def __setitem__(self, key: object, value: object) -> None:
        self._key2, self._value2 = self._key, self._value
        self._key, self._value = key, value


def _init(self: Strip, segments: Iterable[Segment], cell_length: int | None = None) -> None:
    self._segments = list(segments)
    self._cell_length = cell_length
    self._divide_cache = _Recent()
    self._filter_cache = _Recent()
    for name in LEFT_OUT:
        setattr(self, name, NO_CACHE)
    self._render_cache = None
    self._link_ids = None
    self._cell_count = None


def _divide(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
    cuts = list(cuts)
    length = self.cell_length
    if [cut for cut in cuts if cut <= length] == [length]:
        return [self]  # Textual's would keep this list in self's cache: a cycle
    return TEXTUALS_DIVIDE(self, cuts)


def lighten() -> bool:
    """Strips made from now on keep only the two caches that are hit; whether this
    Textual's Strip is the one known (else nothing changes)."""
    return install(Strip, "__init__", _init) and install(Strip, "divide", _divide)


def restore() -> None:
    """Textual's own strips again: the benches' baseline."""
    Strip.__init__ = TEXTUALS
    Strip.divide = TEXTUALS_DIVIDE
