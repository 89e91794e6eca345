"""The dashboard's and the fleet view's full collections: cycles that outlived the young
passes are freed on the app's timer, not left for Python's own full pass (ui/gctune.py)."""

import gc
import weakref

from sgwatch.live.watch import Watch
from sgwatch.ui import gctune
from sgwatch.ui.app import SgwatchApp
from tests.conftest import until
from tests.ui.test_fleet_table import ROWS, Script, fleet, snap


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def old_cycle() -> weakref.ref:
    """A cycle that lived through a young pass (so only a full one frees it), then dropped."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    gc.collect(1)  # alive now: moved to the oldest generation
    return weakref.ref(a)


async def test_the_dashboard_frees_old_cycles_on_its_timer():
    app = SgwatchApp([Watch("ct129")])
    app.GC_FULL_S = 0.3
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        gone = old_cycle()
        await until(pilot, lambda: gone() is None, timeout=10)


async def test_the_fleet_view_frees_them_too(monkeypatch):
    monkeypatch.setattr(gctune, "COLLECT_EVERY_S", 0.3)
    app, _ = fleet(Script(snap(*ROWS)))
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        gone = old_cycle()
        await until(pilot, lambda: gone() is None, timeout=10)
