"""The bandwidth ceiling on `events --json`'s throughput lines: the decode rate an agent
reads comes with how close it is to what the GPUs' memory allows, as the dashboard's
roofline says it (control/batch1.py), without a second tool to ask.

A sample's share of the ceiling is given only when it was taken at one running request:
the ceiling is a batch-1 bound (docs/design/events.md, `throughput`).
"""

from __future__ import annotations

from sgwatch.control.batch1 import Batch1Samples, batch1_roofline
from sgwatch.live.records import Event
from sgwatch.live.session import Session


def with_ceiling(event: Event, session: Session) -> Event:
    """`event` (a throughput one) with `ceiling_tok_s` and `share_of_ceiling_pct`."""
    watch = session.watch
    roof, _ = batch1_roofline(
        watch.state, watch.gpu, Batch1Samples(), None, None, session.profile.gpu_bandwidth_gbps
    )
    ceiling = roof.ceiling_tok_s
    share = None
    if ceiling and event["running_req"] == 1:
        share = round(100.0 * event["gen_tok_s"] / ceiling, 1)
    return {**event, "ceiling_tok_s": None if ceiling is None else round(ceiling, 1),
            "share_of_ceiling_pct": share}  # fmt: skip
