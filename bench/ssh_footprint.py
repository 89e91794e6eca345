"""CPU that watching costs the host: sgwatch's remote processes vs `watch -n1 nvidia-smi`.

Over sshd on loopback with the simulator's nvidia-smi stand-in first on PATH
(a Python program, like the real one a process that must start up for every
sample when run by `watch`). sgwatch runs what a session runs: the log
follower on a log that gains a line every 100 ms, and one `nvidia-smi
--query-gpu ... -lms 500`. The baseline runs `watch -n1 nvidia-smi` with the
same query, in a pty as a person would. CPU is user + system time of every
process started through sshd (children that exited included), over a steady
window after start-up, scaled to a minute. Goal (issue 4): <= 0.1x the baseline.

    python bench/ssh_footprint.py [--seconds S]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
import tempfile
import time
from contextlib import aclosing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import asyncssh

from sgwatch.core.gpu_history import QUERY
from sgwatch.engines import process_patterns
from sgwatch.remote.discover import discover
from sgwatch.remote.gpustream import GpuStream
from sgwatch.remote.logfollow import LogFollower
from sgwatch.sim.common.nvidia_smi import install
from sgwatch.transport.link import Link
from sgwatch.transport.ssh import SshTransport
from tests.integration.sshd import SshdServer

TICK = os.sysconf("SC_CLK_TCK")
WARMUP = 2.0


def cpu_seconds(srv: SshdServer) -> dict[int, float]:
    """utime + stime + cutime + cstime of each live process started through sshd."""
    out = {}
    for pid, _ in srv.remote_processes():
        try:
            rest = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[pid] = sum(int(x) for x in rest[11:15]) / TICK
    return out


async def window(srv: SshdServer, seconds: float) -> float:
    await asyncio.sleep(WARMUP)
    before = cpu_seconds(srv)
    await asyncio.sleep(seconds)
    after = cpu_seconds(srv)
    return sum(v - before.get(pid, 0.0) for pid, v in after.items()) * 60 / seconds


async def appender(log: Path) -> None:
    with log.open("ab", buffering=0) as f:
        while True:
            f.write(b"[2026-11-30 10:00:00 TP0] Decode batch, gen throughput (token/s): 42.0\n")
            await asyncio.sleep(0.1)


async def sgwatch(srv: SshdServer, log: Path, seconds: float) -> float:
    t = SshTransport("gpu129", config=[str(srv.ssh_config)])
    await t.connect()
    python = (await discover(t, process_patterns())).python
    await t.close()
    link = Link(lambda: SshTransport("gpu129", config=[str(srv.ssh_config)]))

    async def drain(events) -> None:
        async with aclosing(events) as evs:
            async for _ in evs:
                pass

    tasks = [
        asyncio.create_task(drain(LogFollower(link, str(log), python).events())),
        asyncio.create_task(drain(GpuStream(link, interval_ms=500).events())),
    ]
    try:
        return await window(srv, seconds)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await link.close()


async def watch(srv: SshdServer, seconds: float) -> float:
    query = f"nvidia-smi --query-gpu={','.join(QUERY)} --format=csv"
    async with asyncssh.connect("gpu129", config=[str(srv.ssh_config)]) as conn:
        proc = await conn.create_process(
            f"watch -n1 {shlex.quote(query)}", request_pty="force", term_type="xterm"
        )
        drain = asyncio.create_task(proc.stdout.read(1 << 30))
        try:
            return await window(srv, seconds)
        finally:
            drain.cancel()
            proc.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        srv = SshdServer(Path(tmp) / "sshd").start()
        install(srv.gpu_bin, Path(tmp) / "gpu-state")
        log = Path(tmp) / "server.log"
        log.write_bytes(b"")

        async def both() -> tuple[float, float]:
            writing = asyncio.create_task(appender(log))
            try:
                base = await watch(srv, args.seconds)
                srv.wait_no_remote_processes()
                ours = await sgwatch(srv, log, args.seconds)
            finally:
                writing.cancel()
            return base, ours

        try:
            t0 = time.perf_counter()
            base, ours = asyncio.run(both())
        finally:
            srv.kill_remote_processes()
            srv.stop()
    print(f"steady window {args.seconds:g} s each ({time.perf_counter() - t0:.0f} s in all)\n")
    print("| on the host | CPU s per minute | vs baseline |\n|---|---:|---:|")
    print(f"| `watch -n1 nvidia-smi --query-gpu=...` (baseline) | {base:.2f} | 1.00x |")
    print(
        f"| sgwatch: log follower + one `nvidia-smi -lms 500` | {ours:.2f} | {ours / base:.3f}x |"
    )


if __name__ == "__main__":
    main()
