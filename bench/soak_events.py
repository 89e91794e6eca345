"""What each kind of host event leaves in the dashboard's C heap, over one or more soaks.

A soak (bench/soak.py) makes one event every event_every/hosts seconds, the hosts in
turn, and samples the dashboard every minute (OUT/app.jsonl). Each event is given the
change from the last sample before it to the last sample before the next event: the C
heap's resident pages, and its free room (resident less in use: what the trim each
minute could not give back). Events in a run's first minutes (`--after`) are left out:
the heap is still filling then. Per kind: how many, the median and the mean, in KiB.

    python bench/soak_events.py OUT [OUT ...] [--after MIN]
"""

from __future__ import annotations

import argparse
import bisect
import collections
import itertools
import json
import statistics
from pathlib import Path


def changes(out: Path, after_s: float) -> dict[str, list[tuple[int, int]]]:
    """Per kind of event: (resident, free room) changes in KiB, one per event."""
    doc = json.loads((out / "events.json").read_text())
    rows = [json.loads(line) for line in (out / "app.jsonl").read_text().splitlines()]
    at = [r["t"] for r in rows]
    events = sorted(doc["events"], key=lambda e: e["at"])
    found: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
    for e, following in itertools.pairwise(events):
        start, end = e["at"] - doc["started_at"], following["at"] - doc["started_at"]
        i, j = bisect.bisect_left(at, start) - 1, bisect.bisect_left(at, end) - 1
        if start < after_s or i < 0 or j <= i:
            continue  # no sample between this event and the next
        before, after = _heap(rows[i]), _heap(rows[j])
        found[e["event"]].append((after[0] - before[0], after[1] - before[1]))
    return found


def _heap(row: dict) -> tuple[int, int]:
    resident = row["resident_kb"]["heap"]
    return resident, resident - row["alloc_kb"]["heap_used"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outs", nargs="+", type=Path)
    ap.add_argument("--after", type=float, default=20, help="minutes left out at the start")
    args = ap.parse_args()
    kinds: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
    for out in args.outs:
        for kind, found in changes(out, args.after * 60).items():
            kinds[kind] += found
    for kind, found in sorted(kinds.items()):
        figures = {"events": len(found)}
        for k, name in enumerate(("resident_kib", "free_room_kib")):
            values = [f[k] for f in found]
            figures[name] = {
                "median": statistics.median(values),
                "mean": round(statistics.fmean(values)),
            }
        print(json.dumps({"event": kind, **figures}))


if __name__ == "__main__":
    main()
