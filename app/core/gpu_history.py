"""Per-GPU history from a `nvidia-smi --query-gpu ... -lms N` stream: bounded, pure."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from sgwatch.core.gpu import CsvError, GpuSample, parse_gpu_row

# The fields sgwatch asks nvidia-smi for, in this order.
QUERY = [
    "index",
    "name",
    "utilization.gpu",
    "memory.used",
    "memory.total",
    "power.draw",
    "temperature.gpu",
]
HISTORY = 240  # samples per GPU (two minutes at -lms 500)


@dataclass(slots=True)
class GpuTrack:
    latest: GpuSample
    util: deque[float] = field(default_factory=lambda: deque(maxlen=HISTORY))
    mem_used: deque[float] = field(default_factory=lambda: deque(maxlen=HISTORY))
    power: deque[float] = field(default_factory=lambda: deque(maxlen=HISTORY))


class GpuHistory:
    def __init__(self, fields: list[str] | None = None) -> None:
        self.fields = fields or QUERY
        self.gpus: dict[int, GpuTrack] = {}
        self.bad_rows = 0  # rows that did not parse (a garbled stream is counted, not fatal)

    def add_line(self, line: str) -> None:
        if not line.strip() or line.startswith("index"):
            return  # blank, or a header repeated by a loop
        try:
            sample = parse_gpu_row(line, self.fields)
        except CsvError:
            self.bad_rows += 1
            return
        if sample.index is None:
            self.bad_rows += 1
            return
        track = self.gpus.get(sample.index)
        if track is None:
            track = self.gpus[sample.index] = GpuTrack(sample)
        track.latest = sample
        for series, value in (
            (track.util, sample.util_pct),
            (track.mem_used, sample.mem_used_mib),
            (track.power, sample.power_w),
        ):
            if value is not None:
                series.append(value)
