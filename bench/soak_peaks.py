"""When the dashboard's small-object heap reaches a new high in a soak, and what was
happening then.

Python's allocator (pymalloc) keeps a 1 MiB arena while one object in it lives, so
the arenas held ratchet up at the peaks of live small objects and stay. A soak run
writes OUT/arenas.jsonl (bench/soak_app.py: the arenas every 5 s, its searches and
tab switches) and OUT/events.json (the hosts' events with their start and length, the
link drops). For every sample that set a new high of arenas this lists what overlapped
the seconds before it, and then, per kind of activity, the share of new highs it was in
the window of, against the share of all samples it was in the window of (a share of
highs well above its share of samples points at it). A run with `--trace` also gives
the transient peaks between samples (tracemalloc's), the highest with what overlapped
them and per activity how high they go.

    python bench/soak_peaks.py OUT [--after MIN] [--lead S]
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
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
    at_highs, at_all = collections.Counter(), collections.Counter()
    highs = looked = 0
    prev_at = start
    print(f"new highs of arenas after minute {args.after:g} (arenas, +new, MiB used: during)")
    for s in samples:
        if s["at"] < start:
            continue
        # the same window for every sample: what a new high is blamed on, and how often
        # each activity would be blamed on a sample taken at random
        lo = prev_at - args.lead
        during = sorted({k for k, a, b in acts if a <= s["at"] and b >= lo})
        at_all.update(during)
        looked += 1
        if s["arenas"] > high:
            highs += 1
            at_highs.update(during)
            print(
                f"  min {(s['at'] - t0) / 60:6.1f}  {s['arenas']:4} +{s['arenas'] - high:<3}"
                f" {s['used_kb'] / 1024:6.1f}  {', '.join(during) or 'nothing marked'}"
            )
            high = s["arenas"]
        prev_at = s["at"]
    print("share of the new highs with each activity in their window, against its share")
    print("of all samples after the warm-up (the same window):")
    for k, n in at_highs.most_common():
        print(f"  {k:<32} {n / highs:5.0%} of highs, {at_all[k] / looked:5.0%} of samples")
    if any("peak_kb" in s for s in samples):
        transient_peaks([s for s in samples if s["at"] >= start], acts, t0, args.lead)


def transient_peaks(samples: list[dict], acts: list, t0: float, lead: float) -> None:
    """A traced run's peaks: the most bytes traced at once between two samples, above
    the more of the two samples' own; the highest, and per activity the median of the
    samples in its window against the others'."""
    rows, prev = [], None
    for s in samples:
        if prev is not None:
            excess = (s["peak_kb"] - max(s["traced_kb"], prev["traced_kb"])) / 1024
            during = sorted({k for k, a, b in acts if a <= s["at"] and b >= prev["at"] - lead})
            rows.append((excess, s["at"], during))
        prev = s
    if not rows:
        return
    print("highest transient peaks (MiB above the samples either side: during)")
    for excess, at, during in sorted(rows, reverse=True)[:12]:
        what = ", ".join(during) or "nothing marked"
        print(f"  min {(at - t0) / 60:6.1f}  {excess:6.2f}  {what}")
    print("per activity: the median peak of the samples with it in their window, and without")
    for kind in sorted({k for _, _, d in rows for k in d}):
        with_ = [e for e, _, d in rows if kind in d]
        without = [e for e, _, d in rows if kind not in d] or [0.0]
        print(
            f"  {kind:<32} {statistics.median(with_):6.2f} ({len(with_)}) against"
            f" {statistics.median(without):6.2f}; max {max(with_):6.2f}"
        )


if __name__ == "__main__":
    main()
