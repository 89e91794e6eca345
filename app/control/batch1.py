"""The batch-1 decode rate and its bandwidth roofline, for the throughput panel.

The roofline compares a measured batch-1 rate with the ceiling: the bench's
one-request-at-a-time decode rate when a bench ran on this run, else the median
generation rate of the decode log lines printed while one request was running.
The log reaches the screen a frame at a time (the newest decode line per
frame), so `Batch1Samples` samples those lines rather than every one.
"""

from __future__ import annotations

from collections import deque
from statistics import median

from sgwatch.core import events as ev
from sgwatch.core.gpu_history import GpuHistory
from sgwatch.core.roofline import Roofline, roofline
from sgwatch.core.state import ServerState

SAMPLES = 600


class Batch1Samples:
    """Generation rates of decode lines seen with `#running-req: 1`, for one run."""

    def __init__(self) -> None:
        self._run: object | None = None  # the run's Throughput: a new one starts afresh
        self._last: ev.Batch | None = None
        self.values: deque[float] = deque(maxlen=SAMPLES)

    def observe(self, s: ServerState) -> None:
        if s.throughput is not self._run:
            self._run, self._last = s.throughput, None
            self.values.clear()
        d = s.last_decode
        if d is None or d is self._last:
            return
        self._last = d
        if d.gen_tok_s is not None and d.number("#running-req") == 1:
            self.values.append(d.gen_tok_s)

    @property
    def median(self) -> float | None:
        return median(self.values) if self.values else None


def batch1_roofline(
    s: ServerState,
    gpus: GpuHistory,
    samples: Batch1Samples,
    bench_c1_tok_s: float | None,
    bench_accept: float | None,
    bandwidth_gb_s: float | None,
) -> tuple[Roofline, str]:
    """The roofline and where its measured rate comes from (a few words)."""
    if bench_c1_tok_s is not None:
        measured, source = bench_c1_tok_s, "bench at concurrency 1"
    elif samples.median is not None:
        n = len(samples.values)
        lines = "line" if n == 1 else "lines"
        measured, source = samples.median, f"median of {n} log {lines} at 1 running request"
    else:
        measured, source = None, ""
    run = s.identity
    spec = run.speculative if run is not None else None
    r = roofline(
        measured,
        gpu_names=[g.latest.name for g in gpus.gpus.values() if g.latest.name],
        weights_gib=s.weights.mem_usage_gb,
        tp=run.tp if run is not None else None,
        accept_len=bench_accept if bench_accept is not None else s.throughput.accept_len_mean,
        draft_gib=s.weights.draft_mem_usage_gb,
        draft_steps=spec.num_steps if spec is not None else None,
        bandwidth_gb_s=bandwidth_gb_s,
    )
    return r, source
