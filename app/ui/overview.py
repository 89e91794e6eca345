"""The overview of several hosts (`sgwatch @lab`): the fleet table, its rows made from Watches.

Each host is a fleet row: its state from the Watch's state and link, the warmup's
progress (capture N/M and ETA, or how long it took) or the crash's cause as the
detail, tok/s and load from /metrics or the log's batch lines, the GPUs from
nvidia-smi. The table is drawn again only when a Watch changed (or the "since"
column's clock moved), and then only the cells whose text changed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sgwatch.core import events as ev
from sgwatch.core.display import duration
from sgwatch.core.state import ServerState, seconds_between
from sgwatch.fleet.row import FleetRow, State
from sgwatch.fleet.source import FleetSnapshot
from sgwatch.live.linkstate import Link
from sgwatch.live.watch import Watch
from sgwatch.ui.badges import PHASE_LABELS
from sgwatch.ui.fleet_table import FleetView

SINCE_TICK_S = 5.0  # the "since" column moves at least this often with nothing new


def progress(s: ServerState) -> str:
    """What the warmup is doing now, or how long it took."""
    if s.ready and s.phases:
        return f"ready in {duration(seconds_between(s.phases[0].started_at, s.ready_at))}"
    cap = next((c for c in reversed(s.captures) if c.open), None)
    if s.state in ("capturing_graphs", "compiling") and cap is not None:
        done = "?" if cap.done is None else cap.done
        total = "?" if cap.total is None else cap.total
        eta = f" ETA {duration(cap.eta_s)}" if cap.eta_s is not None else ""
        return f"{cap.kind} {done}/{total}{eta}"
    if s.state == "loading_weights" and s.weights.total:
        return f"weights {s.weights.done or 0}/{s.weights.total}"
    return PHASE_LABELS.get(s.state, "")


def state_of(w: Watch) -> tuple[State, str]:
    """The fleet state and its detail: the crash first, then the link, then the log."""
    s, link = w.state, w.link
    if s.crash is not None:
        return "crashed", s.crash.summary
    if link.kind is Link.FAILED or link.kind is Link.WAITING or link.kind is Link.NO_SERVER:
        return "down", w.note or str(link)
    if link.kind is Link.STALE or (link.kind is Link.CONNECTING and not s.lines):
        return "stale", str(link)
    if s.state == ev.STOPPED:
        return "down", "stopped"
    if s.state == ev.SERVING:
        return "serving", progress(s)
    if s.state == ev.READY:
        return "idle", progress(s)
    return "warming", progress(s)


def fleet_row(index: int, w: Watch) -> FleetRow:
    s, m = w.state, w.metrics
    state, detail = state_of(w)
    d = s.last_decode
    running = m.running if m is not None else d.number("#running-req") if d else None
    waiting = m.queued if m is not None else d.number("#queue-req") if d else None
    usage = m.token_usage if m is not None else d.number("token usage") if d else None
    accept = m.accept_length if m is not None and m.accept_length is not None else None
    samples = [t.latest for t in w.gpu.gpus.values()]
    util = [g.util_pct for g in samples if g.util_pct is not None]
    return FleetRow(
        key=str(index),
        instance=w.label + (f" [{w.node.rank}/{w.node.nnodes}]" if w.node else ""),
        state=state,
        engine=s.engine,
        model=s.identity.model if s.identity else None,
        host=w.label,
        detail=detail,
        gen_tok_s=m.gen_tok_s if m is not None else s.throughput.last,
        running=running,
        waiting=waiting,
        kv_pct=None if usage is None else usage * 100,
        spec_accept=accept if accept is not None else s.throughput.accept_len_mean,
        ttft_p50_s=m.ttft_p50 if m is not None else None,
        itl_p50_s=m.itl_p50 if m is not None else None,
        gpu_util_pct=sum(util) / len(util) if util else None,
        gpu_mem_used_mib=_sum(g.mem_used_mib for g in samples),
        gpu_mem_total_mib=_sum(g.mem_total_mib for g in samples),
        gpu_power_w=_sum(g.power_w for g in samples),
    )


def _sum(values) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


class Overview(FleetView):
    def __init__(self, watches: list[Watch], clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(clock=clock, live=True)
        self.watches = watches
        self._drawn: list[tuple | None] = [None] * len(watches)  # Watch fingerprints
        self._drawn_at = float("-inf")

    def on_mount(self) -> None:
        self.show_watches()

    def due(self) -> bool:
        if self.clock() - self._drawn_at >= SINCE_TICK_S:
            return True
        return any(
            w.fingerprint != drawn for w, drawn in zip(self.watches, self._drawn, strict=True)
        )

    def show_watches(self) -> None:
        self._drawn = [w.fingerprint for w in self.watches]
        self._drawn_at = now = self.clock()
        rows = tuple(fleet_row(i, w) for i, w in enumerate(self.watches))
        self.show(FleetSnapshot(rows, fetched_at=now))
