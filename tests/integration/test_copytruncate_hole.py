"""logrotate's copytruncate under a server whose output a shell redirected with `>` (no
O_APPEND): the server writes on at its old offset, and the log starts with a hole as long
as it was. Over SSH only the new run's bytes come; the Watch reads the new run."""

from __future__ import annotations

import asyncio
import io
import os
import shutil
from contextlib import aclosing

from sgwatch.cli.replay import read_log
from sgwatch.core.linesplit import LineSplitter
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.remote.logfollow import LogData, LogFollower, LogHole, LogOpened
from tests.integration.helpers import arun, stop, until
from tests.integration.test_tail_first import SAMPLE, decode_line

OLD_RUN = SAMPLE + b"".join(decode_line(i) for i in range(20_000))  # ~3 MB


def shell_redirected(log) -> int:
    """The server's stdout as `> server.log` leaves it: written at its own offset."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.write(fd, OLD_RUN)
    return fd


def copytruncate(log) -> None:
    shutil.copyfile(log, f"{log}.1")
    os.truncate(log, 0)


def test_only_the_new_runs_bytes_cross_the_link(host, link, tmp_path):
    log = tmp_path / "server.log"
    writer = shell_redirected(log)
    new_run = SAMPLE[:4000]

    async def body() -> list:
        the_link, after = link(), []
        async with aclosing(LogFollower(the_link, str(log)).events()) as events:
            async for ev in events:
                if isinstance(ev, LogData) and ev.offset == len(OLD_RUN):
                    break
            copytruncate(log)
            os.write(writer, new_run)
            async for ev in events:
                after.append(ev)
                if isinstance(ev, LogData) and ev.offset == len(OLD_RUN) + len(new_run):
                    break
        await the_link.close()
        return after

    after = arun(body(), timeout=60)
    opened = [ev for ev in after if isinstance(ev, LogOpened)]
    assert [ev.reason for ev in opened] == ["truncated"]
    assert LogHole(len(OLD_RUN)) in after
    assert b"".join(ev.data for ev in after if isinstance(ev, LogData)) == new_run


def test_the_dashboard_reads_the_new_run_and_says_what_it_skipped(host, ssh, tmp_path):
    log = tmp_path / "server.log"
    writer = shell_redirected(log)

    async def body():
        watch, shown, notes = Watch("ct129"), [], []
        session = Session(watch, ssh, log=str(log))
        task = asyncio.create_task(session.run())

        def look() -> bool:
            lines, _ = watch.take_lines()
            shown.extend(lines)
            notes.append(watch.note)
            return watch.caught_up

        await until(look, timeout=60)
        copytruncate(log)
        shown.clear()
        os.write(writer, SAMPLE)  # the server restarted in place: a whole warmup again
        last = LineSplitter().feed(SAMPLE)[-1]
        await until(lambda: look() and last in shown, timeout=60)
        await stop(task, session)
        return watch, shown, notes

    watch, shown, notes = arun(body(), timeout=120)
    assert shown[0] == "[sgwatch] the log was truncated: reading the new run from its start"
    assert shown[1:] == LineSplitter().feed(SAMPLE)  # whole: no NUL, nothing of the old run
    alone = read_log(io.BytesIO(SAMPLE))  # the new run's state, as if its log were alone
    s = watch.state
    assert s.ready and s.throughput.samples == alone.throughput.samples
    assert [p.name for p in s.phases] == [p.name for p in alone.phases]
    skipped = f"its first {len(OLD_RUN) / 2**20:.1f} MiB are NUL bytes, skipped"
    assert any(skipped in n for n in notes)
