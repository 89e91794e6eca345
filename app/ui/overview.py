"""The overview of several hosts (`sgwatch @lab`): the fleet table, its rows made from Watches.

Each host is a fleet row read from its Watch as the fleet's SSH rows are
(fleet/watched.py): the state from the Watch's state and link, the warmup's phase
and progress (capture N/M and ETA, or how long it took) or the crash's cause as the
detail, tok/s and load from /metrics or the log's batch lines, the GPUs from
nvidia-smi. The table is drawn again only when a Watch changed (or the "since"
column's clock moved), and then only the cells whose text changed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sgwatch.core import events as ev
from sgwatch.core.display import progress
from sgwatch.fleet.row import FleetRow, State
from sgwatch.fleet.source import FleetSnapshot
from sgwatch.fleet.watched import WARMING, crash_text, measured, seen, warming_text
from sgwatch.live.watch import Watch
from sgwatch.ui.fleet_table import FleetView
from sgwatch.ui.quiet import hidden

SINCE_TICK_S = 5.0  # the "since" column moves at least this often with nothing new


def state_of(w: Watch) -> tuple[State, str]:
    """The row's state and detail, as the fleet's own SSH rows read a Watch; while a
    log's past is still being read (or a file replayed), what it says so far."""
    got = seen(w)
    if got.state is not None:
        return got.state, got.detail
    s = w.state
    if not s.lines:  # connecting: nothing known yet
        return "stale", got.detail
    if s.state == ev.CRASHED:
        return "crashed", crash_text(s)
    if s.state == ev.STOPPED:
        return "down", "stopped"
    if s.state in WARMING:
        return "warming", warming_text(s)
    return ("idle" if s.state == ev.READY else "serving"), progress(s)


def fleet_row(index: int, w: Watch) -> FleetRow:
    """The log's and GPU stream's figures; /metrics' where the server exports them."""
    s, m = w.state, w.metrics
    state, detail = state_of(w)
    figures = measured(w)
    usage = s.last_decode.number("token usage") if s.last_decode is not None else None
    accept = s.throughput.accept_len_mean
    if m is not None:
        figures.update(gen_tok_s=m.gen_tok_s, running=m.running, waiting=m.queued)
        usage = m.token_usage
        accept = m.accept_length if m.accept_length is not None else accept
    return FleetRow(
        key=str(index),  # the position: enter opens the host's tab by it
        instance=w.label + (f" [{w.node.rank}/{w.node.nnodes}]" if w.node else ""),
        state=state,
        host=w.label,
        detail=detail,
        kv_pct=None if usage is None else usage * 100,
        spec_accept=accept,
        ttft_p50_s=m.ttft_p50 if m is not None else None,
        itl_p50_s=m.itl_p50 if m is not None else None,
        **figures,
    )


class Overview(FleetView):
    def __init__(self, watches: list[Watch], clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(clock=clock, live=True)
        self.watches = watches
        self._drawn: list[tuple | None] = [None] * len(watches)  # Watch fingerprints
        self._drawn_at = float("-inf")

    def on_mount(self) -> None:
        self.show_watches()

    def due(self) -> bool:
        """While hidden (ui/quiet.py) only a Watch's change is due, and is remembered
        without drawing; the table is drawn when its tab is chosen."""
        if not hidden(self) and self.clock() - self._drawn_at >= SINCE_TICK_S:
            return True
        return any(
            w.fingerprint != drawn for w, drawn in zip(self.watches, self._drawn, strict=True)
        )

    def show_watches(self) -> None:
        self._drawn = [w.fingerprint for w in self.watches]
        self._drawn_at = now = self.clock()
        rows = tuple(fleet_row(i, w) for i, w in enumerate(self.watches))
        self.show(FleetSnapshot(rows, fetched_at=now), draw=not hidden(self))
