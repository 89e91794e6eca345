"""What a dashboard left open for days sets once, as it is built: the dashboard and the
fleet view alike (docs/design/memory.md)."""

from __future__ import annotations

from sgwatch.ui import boxmodels, components, heap, maps, pickles, removed, rings, strips


def prepare() -> None:
    strips.lighten()  # fewer caches on every rendered line
    maps.free_promptly()  # no map of the screen left for a full collection
    rings.free_promptly()  # nor a cache's ring of rendered lines when it is emptied
    components.free_promptly()  # nor a restyled widget's parts' styles
    removed.free_promptly()  # nor a removed widget
    boxmodels.keep_fewer()  # each widget's last few box models, not sixteen stale ones
    heap.map_large_blocks_alone()  # large blocks freed leave no room in the C heap
    pickles.copy_out()  # nor small blocks cut from a pickle's buffer, beside the holes
