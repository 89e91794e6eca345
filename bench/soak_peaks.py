"""When the dashboard's small-object heap reaches a new high in a soak, and what was
happening then.

Python's allocator (pymalloc) keeps a 1 MiB arena while one object in it lives, so
the arenas held ratchet up at the peaks of live small objects and stay. A soak run
writes OUT/arenas.jsonl (bench/soak_app.py: the arenas every 5 s, its searches and
tab switches) and OUT/events.json (the hosts' events with their start and length, the
link drops). For every sample that set a new high of arenas this lists what overlapped
the seconds before it, and then, per kind of activity, its share of the new highs
against its share of the run's time (a share of highs well above its share of time
points at it).

    python bench/soak_peaks.py OUT [--after MIN] [--lead S]
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

DROP_S = 30  # a link drop's reconnect and catch-up: what counts as "after a drop"


def activities(doc: dict, marks: list[dict]) -> list[tuple[str, float, float]]:
    """(kind, start, end) of everything the run did to the dashboard."""
    out = [
        (f"{e['event']} ({e['host']})", e["at"], e["at"] + e.get("took_s", 0))
        for e in doc["events"]
    ]
    out += [("link drop", at, at + DROP_S) for at in doc.get("drops", [])]
    out += [(m["mark"], m["at"], m["at"] + 3) for m in marks]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--after", type=float, default=5, help="minutes: ignore the warm-up")
    ap.add_argument("--lead", type=float, default=10, help="seconds before a sample")
    args = ap.parse_args()
    rows = [json.loads(x) for x in (args.out / "arenas.jsonl").read_text().splitlines()]
    doc = json.loads((args.out / "events.json").read_text())
    t0 = doc["started_at"]
    samples = [r for r in rows if "arenas" in r]
    acts = activities(doc, [r for r in rows if "mark" in r])
    start = t0 + args.after * 60
    high = max((s["arenas"] for s in samples if s["at"] < start), default=0)
    highs, prev_at = collections.Counter(), start
    print(f"new highs of arenas after minute {args.after:g} (arenas, +new, MiB used: during)")
    for s in samples:
        if s["at"] < start:
            continue
        if s["arenas"] > high:
            lo = prev_at - args.lead
            during = sorted({k for k, a, b in acts if a <= s["at"] and b >= lo})
            highs.update(during or ["nothing marked"])
            print(
                f"  min {(s['at'] - t0) / 60:6.1f}  {s['arenas']:4} +{s['arenas'] - high:<3}"
                f" {s['used_kb'] / 1024:6.1f}  {', '.join(during) or 'nothing marked'}"
            )
            high = s["arenas"]
        prev_at = s["at"]
    end = samples[-1]["at"] if samples else start
    span = max(end - start, 1)
    total = sum(highs.values()) or 1
    busy = collections.defaultdict(float)
    for k, a, b in acts:
        busy[k] += max(0.0, min(b, end) - max(a, start))
    print("share of new highs against share of time (after the warm-up):")
    for k, n in highs.most_common():
        print(f"  {k:<32} {n / total:5.0%} of highs, busy {busy.get(k, 0) / span:5.0%} of the time")


if __name__ == "__main__":
    main()
