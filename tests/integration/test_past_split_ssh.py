"""A long log's past read by two processes at once over SSH: the whole run's state is
what a replay of the file says, whether the parts join or the rest is read again; and
leaving mid-way leaves no worker behind."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sgwatch.cli.replay import read_log
from sgwatch.core.summary import summarize
from sgwatch.live import pastsplit
from sgwatch.live.backlog import JOINED, READ_AGAIN
from sgwatch.live.options import Options
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from tests.integration.helpers import arun, stop, until
from tests.integration.test_tail_first import SAMPLE, decode_line
from tests.unit.test_pastsplit import workers

CRASH = (
    b"[2026-11-30 11:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    b'  File "/sgl/python/sglang/srt/managers/scheduler.py", line 1, in event_loop\n'
    b"RuntimeError: CUDA error: an illegal memory access was encountered\n"
)


def write_log(path: Path, lines: int, crash_at: int | None = None) -> None:
    with path.open("wb") as f:
        f.write(SAMPLE)
        for i in range(lines):
            if i == crash_at:
                f.write(CRASH)
            f.write(decode_line(i))


@pytest.mark.parametrize(
    ("crash_at", "room", "how"),
    [(None, True, JOINED), (38_000, True, READ_AGAIN), (None, False, None)],
)
def test_the_past_in_two_processes_reads_as_a_replay(
    host, ssh, tmp_path, monkeypatch, crash_at, room, how
):
    """Joined; read again (a crash in the rest); no room for the scratch copy: one process."""
    if not room:
        monkeypatch.setattr(pastsplit, "ROOM", 1e12)
    log = tmp_path / "server.log"
    write_log(log, 40_000, crash_at)  # ~6 MB; the crash, if any, in the rest
    with log.open("rb") as f:
        want = read_log(f)

    async def body() -> tuple[Watch, Session]:
        watch = Watch("ct129")
        session = Session(watch, ssh, log=str(log), options=Options(split_from=1 << 20))
        task = asyncio.create_task(session.run())
        await until(lambda: watch.caught_up, timeout=60)
        await stop(task, session)
        return watch, session

    watch, session = arun(body(), timeout=120)
    assert session.past_split == how
    assert summarize(watch.state) == want
    assert (watch.state.crash is not None) == (crash_at is not None)
    assert workers() == []


def test_leaving_while_the_past_is_read_ends_the_worker(host, ssh, tmp_path):
    log = tmp_path / "server.log"
    write_log(log, 400_000)  # ~60 MB

    async def body() -> None:
        watch = Watch("ct129")
        session = Session(watch, ssh, log=str(log))
        task = asyncio.create_task(session.run())
        await until(lambda: watch.history is not None and watch.history[0] > 0, timeout=60)
        assert workers() and not watch.caught_up
        await stop(task, session)
        await until(lambda: not workers(), timeout=10)

    arun(body(), timeout=120)
