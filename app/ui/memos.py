"""Empty Textual's and Rich's memo caches now and then.

Both memoise with `functools.lru_cache`: about 40 bounded caches of regions, styles,
colours, blank strips and cell widths, up to 74,000 entries in all. A cache fills as new
keys come and then stays full; at a dashboard's rate of new keys (layouts, searches,
tabs, new log text) that takes hours, and the heap grows with it. One of them,
`StylesCache.get_inner_outer`, caches on a method, so its entries keep widgets that are
gone alive with their rendered lines. Each is a memo: a miss is computed again, so
emptying them every CLEAR_EVERY_S keeps what the last minute used and costs a frame a
few milliseconds longer, once. Every minute rather than every ten: what they hold between
two emptyings is a saw in the heap, and the allocator keeps its highest (2.3-2.5 MiB at
ten minutes; at one, the dashboard 2 MB lower at every minute of the soak, its CPU
within 0.4 % of a core). Figures in docs/RELIABILITY.md (the soak).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

CLEAR_EVERY_S = 60.0
OWNERS = ("textual", "rich")  # the packages whose caches are emptied
# Kept: parsed action strings ("tab(1)"), keyed by the app's own bindings, so a fixed
# few; each parsed again left ast.literal_eval's inner functions for the collector.
KEPT = {"textual.actions.parse"}


def caches() -> Iterator:
    """The lru caches of the owners' modules: their functions and class methods (a module
    imported later is found the next time)."""
    seen: set[int] = set()
    for name, module in list(sys.modules.items()):
        if not name.startswith(OWNERS) or module is None:
            continue
        for value in list(vars(module).values()):
            inner = vars(value).values() if isinstance(value, type) else ()
            for item in (value, *inner):
                params = getattr(item, "cache_parameters", None)
                if callable(params) and id(item) not in seen:
                    seen.add(id(item))
                    yield item


def clear() -> int:
    """Empty every bounded cache (an unbounded one loads data once) but those KEPT; the
    entries dropped."""
    dropped = 0
    for cache in caches():
        kept = f"{cache.__module__}.{cache.__qualname__}" in KEPT
        if not kept and cache.cache_parameters().get("maxsize") is not None:
            dropped += cache.cache_info().currsize
            cache.cache_clear()
    return dropped
