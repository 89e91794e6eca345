"""Objects that only a full collection frees: what a change in the UI leaves in cycles."""

import gc
from collections.abc import Callable
from contextlib import contextmanager

from textual.app import App
from textual.pilot import Pilot

Change = Callable[[int], object]


async def left_for_the_collector(kind: type, pilot: Pilot, change: Change, times: int) -> int:
    """Objects of `kind` in reference cycles after `change(k)` for k < times, each one
    drawn before the next."""
    gc.collect()
    # No collection until the one below: objects an earlier one saved would keep later
    # garbage they refer to reachable, and uncounted.
    gc.disable()
    try:
        for k in range(times):
            change(k)
            await pilot.pause()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return sum(isinstance(o, kind) for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


async def left_and_shown(
    app: App, size: tuple[int, int], kind: type, start: Callable[[App], Change], times: int
) -> tuple[int, list[str]]:
    """Objects of `kind` left for the collector after the change `start(app)` returns was
    made `times` times, and the screen's text then."""
    async with app.run_test(size=size) as pilot:
        change = start(app)
        await pilot.pause()
        found = await left_for_the_collector(kind, pilot, change, times)
        return found, [line.text for line in app.screen._compositor.render_strips()]


async def left_and_shown_with(
    replaced: tuple[object, str, object],
    restore: Callable[[], object],
    app: App,
    size: tuple[int, int],
    kind: type,
    start: Callable[[App], Change],
    times: int,
) -> tuple[int, list[str]]:
    """`left_and_shown` with `owner.name` set to `fn` meanwhile (`replaced`: owner, name,
    fn), then `restore()` (a module's `free_promptly`, putting its own back)."""
    with replacing(*replaced, restore):
        return await left_and_shown(app, size, kind, start, times)


@contextmanager
def replacing(owner: object, name: str, fn: object, restore: Callable[[], object]):
    """`owner.name` is `fn` inside, and `restore()` puts the module's own back after."""
    setattr(owner, name, fn)
    try:
        yield
    finally:
        restore()
