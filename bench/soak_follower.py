"""The soak's `sgwatch events HOST --json` (bench/soak.py), reading its own heap: does a
headless session, with no screen, keys or server API, leave the C heap's free room that
the dashboard's does through the servers' events?

A thread appends a JSON line to SOAK_FOLLOWER_SAMPLES every SOAK_EVERY seconds, after
the heap trim the dashboard makes each minute (ui/heap.py): the C heap's resident KiB,
the bytes in use in it, their difference (the free room), Python's arenas. The C library
maps large blocks alone from the dashboard's threshold, so the two compare.

    python bench/soak_follower.py events HOST --json
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heapstats import allocator, resident_kb

from sgwatch.cli.main import main
from sgwatch.ui import heap


def sample(path: str, every: float) -> None:
    t0 = time.monotonic()
    with open(path, "a") as out:
        while True:
            time.sleep(every)
            heap.trim()
            a, r = allocator(), resident_kb()
            rec = {"t": round(time.monotonic() - t0), "heap_kb": r["heap"]}
            rec |= {"heap_used_kb": a["heap_used"], "free_room_kb": r["heap"] - a["heap_used"]}
            rec |= {"py_arenas": a["py_arenas"], "rss_kb": sum(r.values())}
            out.write(json.dumps(rec) + "\n")
            out.flush()


if __name__ == "__main__":
    every = float(os.environ.get("SOAK_EVERY", "60"))
    args = (os.environ["SOAK_FOLLOWER_SAMPLES"], every)
    threading.Thread(target=sample, args=args, daemon=True).start()
    heap.map_large_blocks_alone()
    sys.exit(main(sys.argv[1:]))
