"""What each simulated server's process is: one asyncio loop, the tasks it runs, the GPUs
it publishes, and its exit status once a signal, a failure or a shutdown decides it."""

from __future__ import annotations

import abc
import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from sgwatch.sim.common.clock import SimClock
from sgwatch.sim.common.gpustate import GpuSpec, Publisher
from sgwatch.sim.common.http import HttpServer


@dataclass(slots=True)
class ServerStatus:
    ready: bool = False  # serving: SGLang's warmup request succeeded, vLLM's engine is up
    draining: bool = False  # shutting down
    started_at: float = 0.0  # wall clock


class SimProcess(abc.ABC):
    def __init__(self, speed: float, gpus: Publisher) -> None:
        self.spec = GpuSpec.from_env()
        self.clock = SimClock(speed)
        self.gpus = gpus
        self.status = ServerStatus(started_at=time.time())
        self.pid = os.getpid()
        self._done: asyncio.Future[int] | None = None
        self._http: HttpServer | None = None
        self._tasks: set[asyncio.Task] = set()

    @abc.abstractmethod
    def _signal_handlers(self) -> dict[int, Callable[[], None]]: ...

    @abc.abstractmethod
    async def _serve(self) -> int: ...

    def main(self) -> int:
        """Run the server to its exit status (130 for a Ctrl-C before the loop handles it)."""
        with contextlib.suppress(KeyboardInterrupt):
            return asyncio.run(self._run())
        return 130

    async def _run(self) -> int:
        loop = asyncio.get_running_loop()
        self._done = loop.create_future()
        for sig, handler in self._signal_handlers().items():
            loop.add_signal_handler(sig, handler)
        try:
            return await self._serve()
        finally:
            self.gpus.remove()
            for task in self._tasks:
                task.cancel()

    def _finish(self, code: int) -> None:
        if self._done is not None and not self._done.done():
            self._done.set_result(code)

    def _spawn(self, coro) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
