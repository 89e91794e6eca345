"""Small helpers shared by the integration tests."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine
from typing import Any

from sgwatch.live.ingest import LogIngest


def arun(coro: Coroutine[Any, Any, Any], timeout: float = 60) -> Any:
    """Run one test's async body, bounded: a hang fails instead of stalling the suite."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


def wait_until(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (result := check()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return result


async def until(check: Callable[[], object], timeout: float = 30.0) -> None:
    """Let the loop run until `check()` holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.02)


async def stop(task: asyncio.Task, session: Any) -> None:
    """End a session's task and close its link (a test's session is done)."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await session.link.close()


class Parsed:
    """The lines the dashboard would see: bytes through the real LogIngest pipeline."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ingest = LogIngest(on_lines=self.lines.extend)

    def feed(self, data: bytes) -> None:
        self.ingest.feed(data)
