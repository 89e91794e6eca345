"""The dashboard's heap trim: free memory left inside the C heap (large blocks freed
between ones still in use, as a burst of log reads leaves it) goes back to the system."""

import subprocess
import sys
from pathlib import Path

from sgwatch.live.watch import Watch
from sgwatch.ui.app import SgwatchApp
from tests.conftest import until
from tests.ui.heapfill import fragmented, rss_mb

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = """
from sgwatch.ui import heap
from tests.ui.heapfill import fragmented, rss_mb
kept = fragmented()
before = rss_mb()
heap.trim()
print(before - rss_mb())
"""


def test_free_space_inside_the_heap_goes_back_to_the_system():
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert float(out.stdout) > 20, out.stdout  # MB, of the 30 freed


async def test_the_dashboard_gives_it_back_on_its_timer():
    app = SgwatchApp([Watch("ct129")])
    app.HEAP_TRIM_S = 0.3
    async with app.run_test(size=(100, 30)) as pilot:
        kept = fragmented()
        before = rss_mb()
        await until(pilot, lambda: rss_mb() < before - 20, timeout=10)
        assert len(kept) == 481
