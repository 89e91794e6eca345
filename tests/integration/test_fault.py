"""Drops, frozen servers and restarted runs: no line lost, none repeated."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from contextlib import aclosing
from pathlib import Path

from sgwatch.remote.logfollow import LogData, LogFollower, LogOpened
from sgwatch.transport.link import Backoff, Link, LinkDown, LinkUp
from sgwatch.transport.ssh import SshTransport
from tests.integration.helpers import Parsed, arun, until
from tests.integration.test_streaming import numbered


class Writer(threading.Thread):
    """Appends numbered lines at a steady pace, as a server would, until `total`."""

    def __init__(self, path: Path, total: int, per_tick: int = 200) -> None:
        super().__init__(daemon=True)
        self.path, self.total, self.per_tick = path, total, per_tick
        self.size = sum(len(numbered(i)) for i in range(total))  # the file's final size

    def run(self) -> None:
        with self.path.open("ab") as f:
            for start in range(0, self.total, self.per_tick):
                f.write(b"".join(numbered(i) for i in range(start, start + self.per_tick)))
                f.flush()
                time.sleep(0.005)


async def follow_to_end(follower: LogFollower, writer: Writer, during) -> tuple[Parsed, list]:
    """Feed everything until the file is read to its end; `during` runs once it is open."""
    parsed, seen, task = Parsed(), [], None
    async with aclosing(follower.events()) as events:
        async for ev in events:
            seen.append(ev)
            if task is None:
                task = asyncio.create_task(during())
            if isinstance(ev, LogData):
                parsed.feed(ev.data)
                if ev.offset == writer.size:
                    break
    await task
    await follower.link.close()
    return parsed, seen


def test_sshd_killed_mid_stream_and_restarted_loses_and_repeats_nothing(host, link, tmp_path):
    log = tmp_path / "server.log"
    log.write_bytes(b"")
    writer = Writer(log, total=40_000)
    follower = LogFollower(link(), str(log))

    async def crash_and_restart() -> None:
        writer.start()
        await until(lambda: log.stat().st_size >= writer.size // 4)  # mid-stream
        await asyncio.to_thread(host.stop)  # every connection dropped, listener gone
        gone = log.stat().st_size
        # the server keeps writing while we are away
        await until(lambda: log.stat().st_size > gone + writer.size // 10 or not writer.is_alive())
        await asyncio.to_thread(host.start)

    parsed, seen = arun(follow_to_end(follower, writer, crash_and_restart), timeout=60)
    kinds = [type(e).__name__ for e in seen if not isinstance(e, LogData)]
    assert kinds[0] == "LogOpened" and "LinkDown" in kinds and "LinkUp" in kinds
    assert [e.reason for e in seen if isinstance(e, LogOpened)] == ["start", "resume"]
    assert parsed.lines == log.read_text().splitlines()


def test_a_frozen_server_is_noticed_by_keepalive_and_left_behind(host, tmp_path):
    cfg = tmp_path / "ssh_config"
    host.write_client_config(cfg, host.known_hosts)
    cfg.write_text(cfg.read_text().replace("ServerAliveInterval 2", "ServerAliveInterval 1"))
    the_link = Link(lambda: SshTransport("ct129", config=[str(cfg)]), Backoff(first=0.1))
    log = tmp_path / "server.log"
    log.write_bytes(b"")
    writer = Writer(log, total=20_000, per_tick=50)
    frozen: list[int] = []

    async def freeze() -> None:
        writer.start()
        await until(lambda: log.stat().st_size >= writer.size // 10)  # streaming
        frozen.extend(host.session_pids())  # this connection's sshd and its children
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)

    try:
        parsed, seen = arun(follow_to_end(LogFollower(the_link, str(log)), writer, freeze), 60)
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)  # it finds its client gone and cleans up
    (down,) = [e for e in seen if isinstance(e, LinkDown)]
    assert "keepalive" in down.reason
    assert any(isinstance(e, LinkUp) for e in seen)
    assert parsed.lines == log.read_text().splitlines()


def test_truncated_then_replaced_log_starts_new_runs(host, link, tmp_path):
    log = tmp_path / "server.log"
    run_a = b"[2026-11-30 10:00:00] run A, line 1\n[2026-11-30 10:00:01] run A, line 2\n"
    # Longer than A: only the changed first bytes tell that the file was truncated.
    run_b = b"[2026-11-30 11:00:00] run B after `> server.log`\n" * 3
    run_c = b"[2026-11-30 12:00:00] run C in a new file\n"
    log.write_bytes(run_a)

    async def body() -> list:
        seen, got = [], bytearray()
        the_link = link()
        async with aclosing(LogFollower(the_link, str(log)).events()) as events:
            async for ev in events:
                seen.append(ev)
                if isinstance(ev, LogData):
                    got += ev.data
                if got == run_a:
                    got.clear()
                    await asyncio.to_thread(log.write_bytes, run_b)  # truncate + write
                elif got == run_b:
                    got.clear()
                    os.rename(log, tmp_path / "server.log.1")  # what restart.py does
                    log.write_bytes(run_c)
                elif got == run_c:
                    break
        await the_link.close()
        return seen

    seen = arun(body(), timeout=30)
    opened = [e for e in seen if isinstance(e, LogOpened)]
    assert [(e.reason, e.new_run, e.offset) for e in opened] == [
        ("start", False, 0),
        ("truncated", True, 0),
        ("replaced", True, 0),
    ]
    runs, current = [], b""
    for e in seen:
        if isinstance(e, LogOpened) and current:
            runs.append(current)
            current = b""
        elif isinstance(e, LogData):
            current += e.data
    assert [*runs, current] == [run_a, run_b, run_c]


def test_a_log_replaced_while_disconnected_is_read_from_its_start(host, link, tmp_path):
    log = tmp_path / "server.log"
    log.write_bytes(b"[2026-11-30 10:00:00] old run\n" * 10)
    new = b"[2026-11-30 11:00:00] new run, longer than the old offset\n" * 20

    async def body() -> list:
        seen = []
        the_link = link()
        async with aclosing(LogFollower(the_link, str(log)).events()) as events:
            async for ev in events:
                seen.append(ev)
                if isinstance(ev, LogData) and len(seen) == 2:
                    await asyncio.to_thread(host.kill_connections)
                elif isinstance(ev, LinkDown):
                    os.rename(log, tmp_path / "old.log")
                    log.write_bytes(new)
                elif isinstance(ev, LogData) and ev.data == new:
                    break
        await the_link.close()
        return seen

    seen = arun(body(), timeout=30)
    opened = [e for e in seen if isinstance(e, LogOpened)]
    assert [(e.reason, e.offset) for e in opened] == [("start", 0), ("replaced", 0)]
