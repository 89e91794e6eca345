"""Log ingest over SSH: a whole log from sshd on loopback into parsed state.

Baseline, measured in the same run on the same file: the OpenSSH client
dumping it, `ssh -F CFG ct129 cat FILE > /dev/null`. Then sgwatch's follower
(connect, start the host-side reader, stream to the end) without parsing, and
the whole path into LogIngest (split, parse, reduce). Each time includes the
connection (not discovery, which the session runs once before). For scale, the
same bytes parsed from memory. Goal (issue 4): the whole path >= 0.5x the raw
lines/s.

    python bench/ssh_ingest.py [--lines N] [--repeat R]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from contextlib import aclosing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import sshd
from parse import make_log

from sgwatch.engines import process_patterns
from sgwatch.live.ingest import LogIngest
from sgwatch.remote.discover import discover
from sgwatch.remote.logfollow import LogData, LogFollower
from sgwatch.transport.link import Link
from sgwatch.transport.ssh import SshTransport
from tests.integration.sshd import SshdServer


def parse_only(data: bytes) -> float:
    """The same bytes parsed from memory: the floor for the whole path."""
    t0 = time.perf_counter()
    ingest = LogIngest()
    for start in range(0, len(data), 1 << 20):
        ingest.feed(data[start : start + (1 << 20)])
    ingest.flush()
    return time.perf_counter() - t0


def raw_cat(srv: SshdServer, log: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        ["ssh", "-F", str(srv.ssh_config), "ct129", "cat", str(log)],
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - t0


async def host_python(srv: SshdServer) -> str:
    """What the session learns from discovery first: an absolute interpreter path,
    which skips a pyenv shim's start-up on every stream."""
    t = SshTransport("ct129", config=[str(srv.ssh_config)])
    await t.connect()
    try:
        return (await discover(t, process_patterns())).python
    finally:
        await t.close()


async def follow(srv: SshdServer, log: Path, size: int, parse: bool, python: str) -> float:
    t0 = time.perf_counter()
    link = Link(lambda: SshTransport("ct129", config=[str(srv.ssh_config)]))
    ingest = LogIngest()
    async with aclosing(LogFollower(link, str(log), python).events()) as events:
        async for ev in events:
            if isinstance(ev, LogData):
                if parse:
                    ingest.feed(ev.data)
                if ev.offset == size:
                    break
    ingest.flush()
    elapsed = time.perf_counter() - t0
    await link.close()
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with sshd() as (srv, tmp):
        log = tmp / "server.log"
        data = make_log(args.lines)
        log.write_bytes(data)
        size, lines = len(data), data.count(b"\n")
        py = asyncio.run(host_python(srv))
        runs = {
            "raw `ssh ct129 cat FILE` (baseline)": lambda: raw_cat(srv, log),
            "follower, bytes only": lambda: asyncio.run(follow(srv, log, size, False, py)),
            "follower + parse into state": lambda: asyncio.run(follow(srv, log, size, True, py)),
            "parse into state from memory, no SSH (for scale)": lambda: parse_only(data),
        }
        best = {name: min(fn() for _ in range(args.repeat)) for name, fn in runs.items()}
    base = lines / next(iter(best.values()))
    print(f"{lines:,} lines, {size / 1e6:.1f} MB, best of {args.repeat}\n")
    print("| path | seconds | lines/s | vs raw |\n|---|---:|---:|---:|")
    for name, secs in best.items():
        rate = lines / secs
        print(f"| {name} | {secs:.3f} | {rate:,.0f} | {rate / base:.2f}x |")


if __name__ == "__main__":
    main()
