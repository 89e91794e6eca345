"""The server's two output streams, written the way SGLang's processes write them.

Writes go straight to fds 1 and 2 (no Python buffering), so `> log 2>&1`
interleaves stdout and stderr in the order things happened. SGLang logs to
stderr as `[2026-01-01 10:00:00 TP0] message` (no rank tag when tp is 1, and
`.123` milliseconds with SGLANG_LOG_MS=1); uvicorn's access lines go to stdout.
A tqdm bar is drawn with `\\r` and no newline until it closes, so a line
written while a bar is open lands glued to it, as in real multi-rank logs.
"""

from __future__ import annotations

import logging
import os

from sgwatch.sim.clock import SimClock

INFO, WARNING, ERROR = logging.INFO, logging.WARNING, logging.ERROR


class LogWriter:
    def __init__(self, clock: SimClock, tp: int, level: str = "info") -> None:
        self._clock = clock
        self._tp = tp
        self._min = logging.getLevelName(level.upper())
        if not isinstance(self._min, int):
            self._min = INFO
        self._ms = os.environ.get("SGLANG_LOG_MS") == "1"

    def log(self, message: str, rank: int | None = None, level: int = INFO) -> None:
        """One logger record on stderr; rank None is the main process."""
        if level >= self._min:
            self._write(2, f"{self._prefix(rank)}{message}\n")

    def uvicorn(self, message: str, level: int = INFO) -> None:
        """Uvicorn's own lines (stderr), with SGLang's stamp and uvicorn's level prefix."""
        if level >= self._min:
            name = logging.getLevelName(level) + ":"
            self._write(2, f"{self._prefix(None)}{name:<9} {message}\n")

    def access(self, message: str) -> None:
        """Uvicorn access lines go to stdout."""
        if self._min <= INFO:
            self._write(1, f"{self._prefix(None)}INFO:     {message}\n")

    def raw(self, lines: list[str]) -> None:
        """Unprefixed stderr text: warnings.warn output, tracebacks, argparse."""
        self._write(2, "".join(line + "\n" for line in lines))

    def frame(self, text: str, newline: bool = False) -> None:
        """One tqdm refresh on stderr: `\\r` + the bar; newline only when it closes."""
        self._write(2, "\r" + text + ("\n" if newline else ""))

    def _prefix(self, rank: int | None) -> str:
        now = self._clock.now()
        stamp = now.strftime("%Y-%m-%d %H:%M:%S")
        if self._ms:
            stamp += f".{now.microsecond // 1000:03d}"
        tag = f" TP{rank}" if rank is not None and self._tp > 1 else ""
        return f"[{stamp}{tag}] "

    def _write(self, fd: int, text: str) -> None:
        data = text.encode()
        try:
            while data:
                data = data[os.write(fd, data) :]
        except (BrokenPipeError, OSError):
            pass  # a closed log must not take the server down
