"""A server followed over SSH (a Watch), in a fleet row's terms.

Both SSH-backed parts of a fleet read a Watch through here: the group source (a
host's Watch is its whole row) and the follower (a Watch fills in the row of a
target that Prometheus sees down).
"""

from __future__ import annotations

from dataclasses import dataclass

from sgwatch.core import events as ev
from sgwatch.core.display import PHASE_LABELS, duration, progress
from sgwatch.core.state import ServerState
from sgwatch.fleet.row import State
from sgwatch.live.linkstate import Link
from sgwatch.live.watch import Watch

WARMING = frozenset(ev.WARMUP_PHASES)


@dataclass(frozen=True)
class Seen:
    """What SSH says of a server: a row state (None: nothing known yet) and its detail."""

    state: State | None
    detail: str


def seen(w: Watch) -> Seen:
    link = w.link.kind
    if link is Link.FAILED:
        return Seen("down", w.note or "cannot follow it over SSH")
    if link is Link.STALE:
        return Seen("stale", str(w.link))
    if not w.caught_up:  # connecting, or the log's past is still being read
        return Seen(None, w.note or str(link))
    s = w.state
    if s.state == ev.CRASHED:
        return Seen("crashed", crash_text(s))
    if s.state == ev.STOPPED:
        return Seen("down", "stopped")
    if s.state in WARMING:
        return Seen("warming", warming_text(s))
    if s.state == ev.READY:
        return Seen("idle", progress(s))
    return Seen("serving", progress(s))


def warming_text(s: ServerState) -> str:
    """The phase, short enough for the table's state cell with its progress:
    `weights 3/8`, `graphs 12/36 ETA 8s`, `compile 9/50 ETA 35s`, else the phase's
    label (`KV cache`). Which graphs (decode, prefill) is the host dashboard's to say."""
    cap = next((c for c in reversed(s.captures) if c.open), None)
    if s.state in (ev.CAPTURING_GRAPHS, ev.COMPILING) and cap is not None:
        done = "?" if cap.done is None else cap.done
        total = "?" if cap.total is None else cap.total
        eta = f" ETA {duration(cap.eta_s)}" if cap.eta_s is not None else ""
        what = "compile" if cap.kind == "compile" else "graphs"
        return f"{what} {done}/{total}{eta}"
    if s.state == ev.LOADING_WEIGHTS and s.weights.total:
        return f"weights {s.weights.done or 0}/{s.weights.total}"
    return PHASE_LABELS.get(s.state, s.state)


def crash_text(s: ServerState) -> str:
    """The phase the crash happened in, then its cause (`CUDA graphs: torch.OutOfMemoryError:
    CUDA out of memory. ...`): the phase first, as a cause may be several lines long."""
    crash = s.crash
    if crash is None:
        return "crashed"
    phase = PHASE_LABELS.get(crash.phase, crash.phase)
    return f"{phase}: {crash.summary}" if phase else crash.summary


def measured(w: Watch) -> dict[str, float | str | None]:
    """A row's figures as the log and the GPU stream give them (FleetRow's field names)."""
    s = w.state
    batch = s.last_decode.fields if s.last_decode is not None else {}
    gpus = [t.latest for t in w.gpu.gpus.values()]
    util = [g.util_pct for g in gpus if g.util_pct is not None]
    return {
        "engine": s.engine,
        "model": s.identity.model if s.identity else None,
        "gen_tok_s": s.throughput.last,
        "running": _number(batch.get("#running-req")),
        "waiting": _number(batch.get("#queue-req")),
        "gpu_util_pct": sum(util) / len(util) if util else None,
        "gpu_mem_used_mib": _total(g.mem_used_mib for g in gpus),
        "gpu_mem_total_mib": _total(g.mem_total_mib for g in gpus),
        "gpu_power_w": _total(g.power_w for g in gpus),
    }


def _total(values) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _number(text: str | None) -> float | None:
    try:
        return None if text is None else float(text)
    except ValueError:
        return None
