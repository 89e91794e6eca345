"""The dashboard's heap trim: free memory left inside the C heap (large blocks freed
between ones still in use, as a burst of log reads leaves it) goes back to the system;
and blocks of 32 KiB and more leave no such room at all."""

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


MAPPED_ALONE = """
from sgwatch.ui import heap
from tests.ui.heapfill import rss_mb
assert heap.map_large_blocks_alone()
big = bytearray(1 << 20)
del big  # a large block freed: left alone, glibc would now serve up to 1 MiB from its heap
blocks, kept = [], []
for _ in range(400):
    blocks.append(bytearray(48 << 10))
    kept.append(bytearray(1000))  # between them: freed, they are no free room at the top
before = rss_mb()
del blocks
print(before - rss_mb())
"""


def freed_mb(program: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return float(out.stdout)


def test_free_space_inside_the_heap_goes_back_to_the_system():
    assert freed_mb(PROGRAM) > 20  # MB, of the 30 freed


def test_large_blocks_freed_go_back_at_once_without_a_trim():
    assert freed_mb(MAPPED_ALONE) > 16  # MB, of the 19.2 freed


async def test_the_dashboard_gives_it_back_on_its_timer():
    app = SgwatchApp([Watch("ct129")])
    app.HEAP_TRIM_S = 0.3
    async with app.run_test(size=(100, 30)) as pilot:
        kept = fragmented()
        before = rss_mb()
        await until(pilot, lambda: rss_mb() < before - 20, timeout=10)
        assert len(kept) == 1101
