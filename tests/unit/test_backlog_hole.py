"""A new run read after the hole a copytruncate left (LogHole): its past counts from where
its content starts, so it is read whole, once, and its state takes over from the tail's."""

from __future__ import annotations

import asyncio
import io

import pytest

from sgwatch.cli.replay import read_log
from sgwatch.live.backlog import Backlog
from sgwatch.live.pastsplit import SPLIT_FROM
from sgwatch.live.watch import Watch
from sgwatch.remote.logfollow import LogOpened
from tests.integration.test_tail_first import SAMPLE, decode_line

HOLE = 40 << 20  # the old log's size: the new run is written from there
RUN = SAMPLE + b"".join(decode_line(i) for i in range(8_000))  # ~1.2 MB
TAIL = 1 << 18


@pytest.mark.parametrize("split_from", [SPLIT_FROM, 1 << 19], ids=["alone", "split"])
def test_a_long_run_after_a_hole_is_read_whole_as_its_past(split_from):
    size = HOLE + len(RUN)
    tail = RUN[-TAIL:]
    tail = tail[tail.index(b"\n") + 1 :]  # from a line start, as the host sends it

    async def body() -> Watch:
        watch = Watch("ct129")
        backlog = Backlog(watch, split_from)
        backlog.opened(LogOpened("truncated", 0, size))
        backlog.skip(HOLE)
        await backlog.tail(tail, size)
        for at in range(0, len(RUN), 1 << 16):
            chunk = RUN[at : at + (1 << 16)]
            await backlog.feed(chunk, HOLE + at + len(chunk))
        backlog.close()
        return watch

    watch = asyncio.run(body())
    alone = read_log(io.BytesIO(RUN))
    assert watch.caught_up and watch.history is None  # the past was read and took over
    assert watch.state.throughput.samples == alone.throughput.samples
    assert [p.name for p in watch.state.phases] == [p.name for p in alone.phases]
