"""`sgwatch wait --quiet --every S`: for an agent that reads a command's output only as it
comes (no monitor to turn lines into events), one short status line every S seconds and
nothing else until the outcome line: enough to know the wait is alive and how far the
warmup is, few enough lines to read them all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from sgwatch.core import display
from sgwatch.core import events as ev
from sgwatch.live.linkstate import Link
from sgwatch.live.records import utc_now
from sgwatch.live.watch import Watch


def status_line(watch: Watch, now: str) -> str:
    """`13:05:12 ct129 capturing_graphs, decode 12/36, ETA 40 s` (`now`: ISO-8601)."""
    head = f"{now[11:19]} {watch.label}"
    if not watch.caught_up:  # connecting, waiting for the log, reading its past
        return f"{head} {watch.link}"
    s = watch.state
    parts = [s.state]
    cap = next((c for c in reversed(s.captures) if c.open and c.done is not None), None)
    if s.state == ev.LOADING_WEIGHTS and s.weights.done is not None:
        parts.append(f"weights {s.weights.done}/{s.weights.total or '?'}")
    elif cap is not None:
        parts.append(f"{cap.kind} {cap.done}/{cap.total or '?'}")
        if cap.eta_s is not None:
            parts.append(f"ETA {display.eta(cap.eta_s)}")
    if watch.link.kind is Link.STALE:
        parts.append(str(watch.link))
    return f"{head} {', '.join(parts)}"


async def beat(watch: Watch, every: float, say: Callable[[str], None]) -> None:
    """Say the status line every `every` seconds until cancelled."""
    while True:
        await asyncio.sleep(every)
        say(status_line(watch, utc_now()))
