"""The server's two output streams, written the way the engines' processes write them.

Writes go straight to fds 1 and 2 (no Python buffering), so `> log 2>&1`
interleaves stdout and stderr in the order things happened. A tqdm bar is drawn
with `\\r` and no newline until it closes, so a line written while a bar is open
lands glued to it, as in real multi-rank logs. How a record is prefixed is each
engine's (sglang/writer.py, vllm/log.py).
"""

from __future__ import annotations

import abc
import logging
import os

from sgwatch.sim.common.clock import SimClock

DEBUG, INFO, WARNING, ERROR = logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR


class Streams(abc.ABC):
    def __init__(self, clock: SimClock, tp: int, level: str = "info") -> None:
        self._clock = clock
        self._tp = tp
        self._min = logging.getLevelName(level.upper())
        if not isinstance(self._min, int):
            self._min = INFO

    @abc.abstractmethod
    def uvicorn(self, message: str, level: int = INFO) -> None:
        """Uvicorn's own lines (startup, shutdown, a failed bind)."""

    @abc.abstractmethod
    def access(self, message: str) -> None:
        """One uvicorn access line."""

    def raw(self, lines: list[str]) -> None:
        """Unprefixed stderr text: warnings.warn output, tracebacks, argparse."""
        self._write(2, "".join(line + "\n" for line in lines))

    def frame(self, text: str, newline: bool = False) -> None:
        """One tqdm refresh on stderr: `\\r` + the bar; newline only when it closes."""
        self._write(2, "\r" + text + ("\n" if newline else ""))

    def _write(self, fd: int, text: str) -> None:
        data = text.encode()
        try:
            while data:
                data = data[os.write(fd, data) :]
        except (BrokenPipeError, OSError):
            pass  # a closed log must not take the server down
