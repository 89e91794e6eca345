"""Log mishaps on the host: the followed log deleted while its server writes on.

The server keeps writing to the deleted file, so the lines go on existing even though
no name reaches them: the follower keeps reading its open descriptor, says so once
(a `note`), and after a reconnect reads the server's own stdout (/proc/PID/fd/1),
which discovery knows. (Truncation and replacement: tests/integration/test_fault.py.)
"""

from __future__ import annotations

import asyncio
import os

import pytest

from sgwatch.live.linkstate import LIVE
from tests.fault.hostside import LINE, NumberedServer
from tests.fault.test_drops import Follower
from tests.integration.helpers import arun, until


@pytest.mark.parametrize("drop", [False, True], ids=["linked", "after-a-drop"])
def test_a_deleted_log_is_still_read_to_its_last_line(host, proxy, flaky_config, tmp_path, drop):
    server = NumberedServer(host, tmp_path)
    follower = Follower(flaky_config, server.pid)
    notes: list[str] = []
    follower.watch.subscribe(lambda t: notes.append(t.value) if t.kind == "note" else None)

    async def body() -> int:
        follower.start()
        try:
            await until(lambda: follower.live and len(follower.shown) > 50, 30)
            os.unlink(server.log)  # the server writes on into the deleted file
            await until(lambda: any("deleted while followed" in n for n in notes), 10)
            if drop:  # the name is gone when the follower starts again
                proxy.reset()
                await until(lambda: follower.stale_count() == 1 and follower.live, 20)
            seen = len(follower.take())
            await until(lambda: len(follower.take()) > seen + 50, 20)  # still coming
            written = await asyncio.to_thread(server.finish_count)
            await until(lambda: len(follower.take()) >= written, 30)
            return written
        finally:
            await follower.stop()

    try:
        written = arun(body(), timeout=90)
    finally:
        server.kill()
    assert follower.shown == [LINE % i for i in range(written)]  # nothing lost, none twice
    assert follower.watch.link == LIVE
