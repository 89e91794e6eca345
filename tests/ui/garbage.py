"""Objects that only a full collection frees: what a change in the UI leaves in cycles."""

import gc
from collections.abc import Callable

from textual.pilot import Pilot


async def left_for_the_collector(
    kind: type, pilot: Pilot, change: Callable[[int], object], times: int
) -> int:
    """Objects of `kind` in reference cycles after `change(k)` for k < times, each one
    drawn before the next."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for k in range(times):
            change(k)
            await pilot.pause()
        gc.collect()
        return sum(isinstance(o, kind) for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
