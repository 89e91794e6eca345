"""The follower's bookkeeping over the test sshd with no server on it: a host with
nothing to follow says so in the row and is tried again later; a source that did not
answer starts nothing; a row gone from the source, and close(), stop its session."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

from sgwatch.fleet.follow import Followed
from sgwatch.fleet.row import FleetRow
from sgwatch.fleet.source import FleetSnapshot
from sgwatch.fleet.tail import on_port
from sgwatch.live.options import Options
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from tests.integration.conftest import host, ssh, sshd  # noqa: F401 (fixtures)
from tests.integration.helpers import arun


class Scripted:
    name = "scripted"

    def __init__(self, rows: list[FleetRow]) -> None:
        self.rows = rows
        self.stale = False

    async def snapshot(self) -> FleetSnapshot:
        return FleetSnapshot(tuple(self.rows), fetched_at=time.time(), stale=self.stale)

    async def close(self) -> None:
        pass


DOWN = FleetRow(key="x", instance="127.0.0.1:1", state="down", host="gpu129", detail="refused")


def test_nothing_to_follow_is_said_and_tried_again_and_gone_rows_stop(ssh, tmp_path):  # noqa: F811
    started: list[Session] = []

    def start(alias: str, port: int | None) -> Session:
        # no server there, and no log of one that is gone in this test's folder
        options = Options(check_every=0.2, log_places=(str(tmp_path),))
        started.append(
            Session(Watch(alias), lambda: ssh(alias), choose=on_port(port), options=options)
        )
        return started[-1]

    inner = Scripted([DOWN, replace(DOWN, key="unmapped", instance="10.0.0.9:8000", host=None)])
    source = Followed(inner, start, retry_s=0.5)

    async def body() -> None:
        try:
            inner.stale = True  # the source did not answer: nothing starts
            await source.snapshot()
            assert started == []
            inner.stale = False
            rows = {r.key: r for r in (await source.snapshot()).rows}
            assert len(started) == 1  # the row with no SSH host is not followed
            assert rows["unmapped"].detail == "refused"
            deadline = time.monotonic() + 45
            while "no server running" not in rows["x"].detail:
                assert time.monotonic() < deadline, rows["x"].detail
                await asyncio.sleep(0.1)
                rows = {r.key: r for r in (await source.snapshot()).rows}
            assert rows["x"].state == "down" and rows["x"].detail.startswith("refused; SSH: ")
            assert source.following == []  # its session ended: the place is free
            deadline = time.monotonic() + 10
            while len(started) < 2:  # tried again after retry_s
                assert time.monotonic() < deadline, "not tried again"
                await asyncio.sleep(0.1)
                await source.snapshot()
            inner.rows = []  # gone from the source: its session is stopped
            await source.snapshot()
            assert source.following == [] and source.queued == []
        finally:
            await source.close()

    arun(body(), timeout=90)
