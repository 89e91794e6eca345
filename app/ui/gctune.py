"""Keep Python's cyclic garbage collector from stalling frames.

Measured under a log flood (bench/ui_flood.py): full collections walked every
object imported or built at start-up and paused the app up to 70 ms at a time,
often enough to be most of the slow key presses. Once the dashboard is built,
what exists then lives as long as the app: collect once, freeze it out of later
passes, and collect young objects in larger batches (fewer, short pauses).
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000  # allocations between young collections (Python's default: 700)


def settle() -> None:
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)


def release() -> None:
    gc.unfreeze()
