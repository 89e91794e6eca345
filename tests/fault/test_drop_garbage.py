"""A dropped link's stream goes when the link does, not at a full collection: a
dashboard left open lives through a drop every few minutes (docs/design/memory.md)."""

from __future__ import annotations

import asyncio
import gc

from sgwatch.transport.base import Stream
from tests.fault.hostside import NumberedServer
from tests.fault.test_drops import Follower
from tests.integration.helpers import arun, until

DROPS = 3


def test_a_dropped_links_stream_and_its_stderr_task_are_freed_at_once(
    host, proxy, flaky_config, tmp_path
):
    server = NumberedServer(host, tmp_path)
    left: list[object] = []

    async def body() -> None:
        follower = Follower(flaky_config, server.pid)
        follower.start()
        try:
            await until(lambda: follower.live and follower.shown, 30)
            gc.collect()
            gc.set_debug(gc.DEBUG_SAVEALL)
            try:
                for n in range(1, DROPS + 1):
                    proxy.reset()
                    await until(lambda: follower.stale_count() == n, 10)  # noqa: B023
                    await until(lambda: follower.live, 10)
                gc.collect()
                left.extend(o for o in gc.garbage if isinstance(o, (Stream, asyncio.Task)))
            finally:
                gc.set_debug(0)
                gc.garbage.clear()
        finally:
            await follower.stop()

    try:
        arun(body(), timeout=90)
    finally:
        server.kill()
    # each drop once left its stream, its stderr task and the frames they held
    assert left == []
