"""The dashboard (headless) through drops: the header says stale with the cause while
the link is down and live again after, and the session never dies (the lines' integrity
through drops: test_drops.py)."""

from __future__ import annotations

import asyncio

from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.widgets.header import HostHeader
from tests.conftest import until
from tests.fault.hostside import NumberedServer
from tests.fault.test_drops import Follower

DROPS = 5


async def test_the_header_shows_each_outage_and_the_recovery(host, proxy, flaky_config, tmp_path):
    server = await asyncio.to_thread(NumberedServer, host, tmp_path)
    f = Follower(flaky_config, server.pid)
    runs: list[asyncio.Task] = []

    async def pump(_watch) -> None:
        runs.append(asyncio.current_task())
        await f.session.run()

    app = SgwatchApp([f.watch], [pump])
    try:
        async with app.run_test(size=(140, 45)) as pilot:

            def header() -> str:
                return str(app.query_one(HostHeader).render())

            await until(pilot, lambda: "● live" in header())
            for _ in range(DROPS):
                proxy.cut_after = 0  # new connections fail at once: the outage lasts
                proxy.reset()
                await until(pilot, lambda: "○ stale" in header() and "connection lost" in header())
                proxy.cut_after = None
                await until(pilot, lambda: "● live" in header())
            assert f.stale_count() == DROPS
            assert not runs[0].done() and f.watch.state.state != "crashed"
    finally:
        await asyncio.to_thread(server.kill)
