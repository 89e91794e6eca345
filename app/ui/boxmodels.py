"""Each widget keeps its last few box models, not sixteen.

Textual caches a widget's box model under its container's size, the viewport, the `fr`
fractions and the widget's layout and style versions. A restyle (a class the layout key
toggles, the search bar shown or hidden) makes a new key, and the answers under older
keys are never asked for again. In Textual's test harness, over 30 rounds of the soak's
keys on the dashboard, keeping 16, 4 or 2 a widget answered 1,308, 1,297 and 1,293 of
the same 3,601 asks: what the others hold is stale. Kept at 16, the caches filled over
the soak's first 80 minutes (about 4,100 fractions and 1,000 box models of their keys
and answers alive at the end): a ceiling, reached slowly (docs/design/memory.md).

`keep_fewer()` makes widgets created from now on keep `KEPT`. It relies on the widget
module making that one cache, and no other, with `LRUCache`: checked for the pinned
Textual by tests/ui/test_boxmodels.py; another version is left as it is.
"""

from __future__ import annotations

import textual.widget
from textual.cache import LRUCache

from sgwatch.ui.patching import install

KEPT = 4


def _box_models(maxsize: int) -> LRUCache:
    return LRUCache(min(maxsize, KEPT))


def keep_fewer() -> bool:
    """Widgets made from now on keep `KEPT` box models; whether this Textual is the one
    checked (else nothing changes)."""
    return install(textual.widget, "LRUCache", _box_models)
