"""How a server state and a span of time read, the same wherever sgwatch shows them:
the dashboard, `replay`, `wait`/`events` and a fleet row.

A state reads as a badge, a symbol and a word (`◆ CAPTURING`), so colour is never
the only cue. A span reads one of three ways, each fitted to where it stands: the
dashboard's narrow columns (`3m05s`), the replay timeline's tenths (`22.0 s`,
`2m24.0s`), and the seconds of a `wait` line's ETA (`12 s`, `1m30s`).
Pure: no I/O.
"""

from __future__ import annotations

from typing import NamedTuple

from sgwatch.core import events as ev
from sgwatch.core.state import ServerState, seconds_between


class Badge(NamedTuple):
    symbol: str
    word: str
    tone: str  # pending, busy, good or bad: the colour the dashboard gives it

    def __str__(self) -> str:
        return f"{self.symbol} {self.word}"


BADGES = {
    ev.STARTING: Badge("◌", "STARTING", "pending"),
    ev.LOADING_WEIGHTS: Badge("⇣", "LOADING", "busy"),
    ev.ALLOCATING_KV_CACHE: Badge("▦", "KV CACHE", "busy"),
    ev.CAPTURING_GRAPHS: Badge("◆", "CAPTURING", "busy"),
    ev.COMPILING: Badge("⚙", "COMPILING", "busy"),
    ev.WARMING_UP: Badge("…", "WARMING UP", "busy"),
    ev.READY: Badge("✓", "READY", "good"),
    ev.SERVING: Badge("▶", "SERVING", "good"),
    ev.CRASHED: Badge("✗", "CRASHED", "bad"),
    ev.STOPPED: Badge("■", "STOPPED", "pending"),
}

# The warmup phases' names on screen and in a fleet row's detail.
PHASE_LABELS = {
    ev.STARTING: "Start-up",
    ev.LOADING_WEIGHTS: "Weights",
    ev.ALLOCATING_KV_CACHE: "KV cache",
    ev.CAPTURING_GRAPHS: "CUDA graphs",
    ev.COMPILING: "Compile",
    ev.WARMING_UP: "Warm-up",
}


def badge(state: str) -> Badge:
    return BADGES.get(state, Badge("?", state.upper(), "pending"))


def duration(seconds: float | None) -> str:
    """The dashboard's: `45s`, `3m05s`, `1h02m`; '' when unknown."""
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    return f"{minutes // 60}h{minutes % 60:02d}m"


def duration_tenths(seconds: float | None) -> str:
    """The replay timeline's, from stamped lines to the tenth: `22.0 s`, `2m24.0s`;
    '?' when unknown."""
    if seconds is None:
        return "?"
    if seconds >= 60:
        return f"{int(seconds // 60)}m{seconds % 60:04.1f}s"
    return f"{seconds:.1f} s"


def eta(seconds: float) -> str:
    """A `wait` line's ETA: whole seconds up to a minute and a half (`75 s` reads
    quicker than `1m15s`), then minutes (`1m30s`)."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


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
