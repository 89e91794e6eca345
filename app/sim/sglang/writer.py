"""SGLang's records: `[2026-01-01 10:00:00 TP0] message` on stderr.

No rank tag when tp is 1, and `.123` milliseconds with SGLANG_LOG_MS=1; uvicorn's
lines carry SGLang's stamp and uvicorn's level prefix, and its access lines go to
stdout.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from sgwatch.sim.common.clock import SimClock
from sgwatch.sim.common.writer import INFO, Streams
from sgwatch.sim.sglang.logfmt import Format05


class SglangWriter(Streams):
    def __init__(self, clock: SimClock, tp: int, level: str = "info") -> None:
        super().__init__(clock, tp, level)
        self._ms = os.environ.get("SGLANG_LOG_MS") == "1"

    def log(self, message: str, rank: int | None = None, level: int = INFO) -> None:
        """One logger record on stderr; rank None is the main process."""
        if level >= self._min:
            self._write(2, f"{self._prefix(rank)}{message}\n")

    def uvicorn(self, message: str, level: int = INFO) -> None:
        if level >= self._min:
            name = logging.getLevelName(level) + ":"
            self._write(2, f"{self._prefix(None)}{name:<9} {message}\n")

    def access(self, message: str) -> None:
        if self._min <= INFO:
            self._write(1, f"{self._prefix(None)}INFO:     {message}\n")

    def _prefix(self, rank: int | None) -> str:
        now = self._clock.now()
        stamp = now.strftime("%Y-%m-%d %H:%M:%S")
        if self._ms:
            stamp += f".{now.microsecond // 1000:03d}"
        tag = f" TP{rank}" if rank is not None and self._tp > 1 else ""
        return f"[{stamp}{tag}] "


class BatchLog:
    """The scheduler's `Prefill batch` and `Decode batch` lines, in the release's
    wording, logged by rank 0."""

    def __init__(self, fmt: Format05, out: SglangWriter) -> None:
        self._fmt, self._out = fmt, out

    def prefill_batch(self, *values: Any) -> None:
        self._out.log(self._fmt.prefill_batch(*values), 0)

    def decode_batch(self, *values: Any) -> None:
        self._out.log(self._fmt.decode_batch(*values), 0)
