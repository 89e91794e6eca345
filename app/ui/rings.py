"""Textual's LRU caches emptied without leaving their ring for the collector.

Textual's `LRUCache` keeps its entries in a ring of links, `[prev, next, key, value]`,
each link referring to its neighbours. Its `clear()` drops the ring whole: a reference
cycle, so every value in it waits for a full collection. The log view keeps its
rendered lines in one (a few screens of strips) and empties it whenever a search's term
or its own focus changes: in the demo 130-160 strips a minute with their segments and
caches, most of the cyclic garbage that was left once the footer kept its keys
(docs/design/memory.md). Textual's widgets empty theirs too (a node's query cache when
the DOM changes).

`free_promptly()` makes `clear()` undo each link first: the values go as soon as the
cache lets go of them, at the cost of a pass over its entries (a few hundred at most
here). For the Textual it was checked against (whose ring holds only the links its dict
holds); another is left as it is, and tests/ui/test_rings.py says so.
"""

from __future__ import annotations

from textual.cache import LRUCache

from sgwatch.ui.patching import install

TEXTUALS = LRUCache.clear


def _clear(self: LRUCache) -> None:
    for link in self._cache.values():
        link.clear()  # no neighbours, no value: the ring is undone link by link
    TEXTUALS(self)


def free_promptly() -> bool:
    """Caches emptied from now on free their values at once; whether this Textual's
    LRUCache is the one known (else nothing changes)."""
    return install(LRUCache, "clear", _clear)
