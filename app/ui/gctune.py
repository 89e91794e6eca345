"""Keep Python's cyclic garbage collector from stalling frames.

Measured under a log flood (bench/ui_flood.py): full collections walked every
object imported or built at start-up and paused the app up to 70 ms at a time,
often enough to be most of the slow key presses. Once the dashboard is built,
what exists then lives as long as the app: collect once, freeze it out of later
passes, and collect young objects in larger batches (fewer, short pauses).

Left open, the dashboard also makes cycles that outlive the young passes (a widget's
line cache dropped whole, the compositor's maps of a relayout): only a full pass frees
them. In the soak (a few hundred log lines a second, a full pass every minute) they
piled up by about 2 MiB between passes, and Python's arenas, each kept while one object
in it lives, follow the highest the heap ever reached, garbage included. A full pass
every COLLECT_EVERY_S keeps that pile small; it walks only what was built since the
freeze (docs/RELIABILITY.md, Soak).
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000  # allocations between young collections (Python's default: 700)
COLLECT_EVERY_S = 10.0  # between full collections, from the app's timer


def settle() -> None:
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)


def collect() -> None:
    """A full collection, for the app's timer (Textual's timers take no builtins)."""
    gc.collect()


def release() -> None:
    gc.unfreeze()
