"""Latency from an append on the host to the line in sgwatch, over sshd on loopback.

Host and client are one machine here, so both ends read the same clock: each
appended line carries its write time (time.perf_counter_ns) and the reader
subtracts it on arrival. Baseline, in the same run: a bare asyncssh
`exec tail -n0 -F LOG` read with read(65536) (docs/design/ssh.md). Then sgwatch's
follower up to the LogData event, and on to the line out of LogIngest (parsed
into state). Half the lines end in `\\n`, half are tqdm frames (`\\r`, no newline).
Goal (issue 4): median and p95 within +20 ms of the baseline.

    python bench/ssh_latency.py [--lines N] [--gap-ms G]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import tempfile
import time
from contextlib import aclosing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import asyncssh

from sgwatch.engines import process_patterns
from sgwatch.live.ingest import LogIngest
from sgwatch.remote.discover import discover
from sgwatch.remote.logfollow import LogData, LogFollower, LogOpened
from sgwatch.transport.link import Link
from sgwatch.transport.ssh import SshTransport
from tests.integration.sshd import SshdServer

STAMP = re.compile(rb"t=(\d+) ")


def line(k: int) -> bytes:
    now = time.perf_counter_ns()
    if k % 2:
        return f"\rCapturing batches t={now} : {k % 100:3d}%|####".encode()
    return f"[2026-11-30 10:00:00 TP0] Decode batch t={now} #running-req: 1\n".encode()


async def writer(log: Path, n: int, gap: float) -> None:
    with log.open("ab", buffering=0) as f:
        for k in range(n):
            f.write(line(k))
            await asyncio.sleep(gap)


class Stamps:
    """Latencies (ms) of the stamps in a byte stream, each counted once it is whole."""

    def __init__(self) -> None:
        self.pending = b""
        self.ms: list[float] = []

    def add(self, data: bytes, now: int) -> None:
        data = self.pending + data
        cut = data.rfind(b" ") + 1  # a stamp is whole once the space after it arrived
        self.ms += [(now - int(m[1])) / 1e6 for m in STAMP.finditer(data[:cut])]
        self.pending = data[cut:]


async def bare_tail(srv: SshdServer, log: Path, n: int, gap: float) -> list[float]:
    stamps = Stamps()
    async with asyncssh.connect("ct129", config=[str(srv.ssh_config)]) as conn:
        proc = await conn.create_process(f"exec tail -n0 -F {log}", encoding=None)
        await asyncio.sleep(0.5)  # tail is watching
        task = asyncio.create_task(writer(log, n, gap))
        while len(stamps.ms) < n:
            chunk = await proc.stdout.read(65536)
            stamps.add(chunk, time.perf_counter_ns())
        await task
        proc.close()
    return stamps.ms


async def sgwatch(srv: SshdServer, log: Path, n: int, gap: float, parse: bool) -> list[float]:
    t = SshTransport("ct129", config=[str(srv.ssh_config)])
    await t.connect()
    python = (await discover(t, process_patterns())).python
    await t.close()
    stamps = Stamps()
    parsed: list[str] = []
    ingest = LogIngest(on_lines=parsed.extend)
    link = Link(lambda: SshTransport("ct129", config=[str(srv.ssh_config)]))
    # A parsed line exists once its end arrived: `\n` lines count; a `\r` frame ends
    # only when the next write arrives, a wait that belongs to the writer, not to us.
    want = n // 2 if parse else n
    task = None
    async with aclosing(LogFollower(link, str(log), python).events()) as events:
        async for ev in events:
            if isinstance(ev, LogOpened) and task is None:
                task = asyncio.create_task(writer(log, n, gap))
            elif isinstance(ev, LogData):
                if parse:
                    ingest.feed(ev.data)
                    done = [ln for ln in parsed if "Decode batch" in ln]
                    stamps.add("".join(f"{ln} " for ln in done).encode(), time.perf_counter_ns())
                    parsed.clear()
                else:
                    stamps.add(ev.data, time.perf_counter_ns())
                if len(stamps.ms) >= want:
                    break
    await task
    await link.close()
    return stamps.ms


def stats(lat: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(lat, n=20)
    return statistics.median(lat), q[18]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=400)
    ap.add_argument("--gap-ms", type=float, default=10)
    args = ap.parse_args()
    n, gap = args.lines, args.gap_ms / 1000
    with tempfile.TemporaryDirectory() as tmp:
        srv = SshdServer(Path(tmp) / "sshd").start()
        try:
            results = {}
            readers = {
                "bare asyncssh `tail -F` read (baseline)": lambda p: bare_tail(srv, p, n, gap),
                "sgwatch follower: LogData": lambda p: sgwatch(srv, p, n, gap, False),
                "sgwatch follower + LogIngest: `\\n` line parsed": lambda p: sgwatch(
                    srv, p, n, gap, True
                ),
            }
            for name, run in readers.items():
                log = Path(tmp) / f"{len(results)}.log"
                log.write_bytes(b"")
                results[name] = stats(asyncio.run(run(log)))
        finally:
            srv.stop()
    base_med, base_p95 = next(iter(results.values()))
    print(f"{n} appends, {args.gap_ms:g} ms apart (half `\\n` lines, half `\\r` frames)\n")
    print("| reader | median ms | p95 ms | median vs baseline | p95 vs baseline |")
    print("|---|---:|---:|---:|---:|")
    for name, (med, p95) in results.items():
        print(f"| {name} | {med:.2f} | {p95:.2f} | {med - base_med:+.2f} | {p95 - base_p95:+.2f} |")


if __name__ == "__main__":
    main()
