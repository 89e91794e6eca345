"""Do keys and log lines alone grow the C heap's free room? The soak's keys, without SSH.

The dashboard over two hosts in Textual's harness (headless, 140x45, the bundled warmup
log first), then rounds of: 300 decode lines a host, the layout key, a search (`/`
Decode, enter, `n`, escape, end) and the other tab. Every 10 rounds, after the heap trim
the dashboard makes each minute, one JSON line: the C heap's resident pages and the
bytes in use in it (their difference is the free room the trim could not give back),
the large blocks mapped alone, Python's arenas, and the free chunks by size
(bench/heapstats.py, as the soak samples them).

    python bench/heap_keys.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from heapstats import allocator, free_chunks, resident_kb  # noqa: E402
from ui_flood import serving_lines  # noqa: E402

from sgwatch.ui import heap  # noqa: E402
from tests.conftest import settle  # noqa: E402
from tests.ui.test_hidden_tabs import SAMPLE, SIZE, feed, two_hosts  # noqa: E402

SEARCH = ("slash", *"Decode", "enter", "n", "escape", "end")


def reading(rounds: int) -> dict:
    heap.trim()
    a, r = allocator(), resident_kb()
    return {
        "rounds": rounds,
        "heap_resident_kb": r["heap"],
        "heap_used_kb": a["heap_used"],
        "free_room_kb": r["heap"] - a["heap_used"],
        "mapped_alone_kb": a["mmapped"],
        "py_arenas": a["py_arenas"],
        "free_chunks_kb": {size: kb for size, (kb, _) in free_chunks().items()},
    }


async def run(rounds: int) -> None:
    app, clock, a, b = two_hosts()
    async with app.run_test(size=SIZE) as pilot:
        warmup = SAMPLE.read_text().splitlines()
        feed(a, warmup)
        feed(b, warmup)
        await pilot.press("1")
        await settle(app, pilot, clock)
        n = 0
        for k in range(1, rounds + 1):
            for w in (a, b):
                w.feed(b"".join(serving_lines(300, first=n)))
                n += 300
            for keys in (("l",), SEARCH, ("2" if k % 2 else "1",)):
                await pilot.press(*keys)
                await settle(app, pilot, clock)
            if k % 10 == 0:
                print(json.dumps(reading(k)), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=70)
    asyncio.run(run(ap.parse_args().rounds))


if __name__ == "__main__":
    main()
