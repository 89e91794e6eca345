"""Simulated time: the server's clock runs `speed` times faster than the wall.

Log stamps, elapsed values and tok/s all read simulated time, so a warmup
compressed 100x for a test still reads like a real one; only the waiting is
shorter.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime


class SimClock:
    def __init__(self, speed: float) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.speed = speed
        self._wall0 = time.time()
        self._mono0 = time.monotonic()

    def elapsed(self) -> float:
        """Simulated seconds since the process started."""
        return (time.monotonic() - self._mono0) * self.speed

    def now(self) -> datetime:
        """Simulated local time, what the log stamps show."""
        return datetime.fromtimestamp(self._wall0 + self.elapsed())

    def wall_at(self, sim_t: float) -> float:
        """The wall-clock epoch at which simulated offset `sim_t` happens."""
        return self._wall0 + sim_t / self.speed

    async def sleep(self, sim_seconds: float) -> None:
        await asyncio.sleep(max(0.0, sim_seconds) / self.speed)

    async def sleep_until(self, sim_t: float) -> None:
        await self.sleep(sim_t - self.elapsed())
