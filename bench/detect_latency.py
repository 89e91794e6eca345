"""Ready/crash detected after the line is written on the host, over sshd on loopback.

Each trial writes a warmed-up log (the bundled sample up to its ready line), lets the
reader catch up, then appends the ready line (or a crash record, in one write as a
logging call makes it) at a random moment and times how long until it is noticed.
Host and client are one machine, so both ends read the same clock.

- sgwatch: `follow()` (what `sgwatch wait` / `sgwatch events` run) in this process,
  until the ready/crash event is emitted and until follow() returns (the session
  closed); and the real `sgwatch wait` command, until its process has exited.
- baseline, in the same run: the old way, a loop of `sleep N && ssh host tail -20 LOG`
  (over one open asyncssh connection, which spares it the connection set-up each
  round), with N scaled down from the 120 s people type to --period (default 2 s).
  Its latency is about N/2 on average, whatever the machine.
Goal (docs/design/architecture.md, measured goals): detected within 100 ms.

    python bench/detect_latency.py [--trials N] [--period S]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.resources import files
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import asyncssh

import sgwatch.live.follow as following
from sgwatch.live.follow import follow
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.transport.ssh import SshTransport
from tests.integration.sshd import SshdServer

SAMPLE = files("sgwatch.samples").joinpath("qwen27b-tp2-warmup.log").read_bytes()
READY_AT = SAMPLE.index(b"[2026-11-30 09:16:26] The server is fired up")
PREFIX = SAMPLE[:READY_AT]
READY = SAMPLE[READY_AT : SAMPLE.index(b"\n", READY_AT) + 1]
CRASH = (
    b"[2026-11-30 09:16:27] Scheduler hit an exception: Traceback (most recent call last):\n"
    b'  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2900, in run_scheduler\n'
    b"    scheduler.event_loop_overlap()\n"
    b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
)


def append(log: Path, data: bytes) -> int:
    with log.open("ab", buffering=0) as f:
        t = time.perf_counter_ns()
        f.write(data)
    return t


async def sgwatch_trial(srv: SshdServer, log: Path, line: bytes) -> tuple[float, float]:
    """(ms to the ready/crash event, ms until follow() returned)."""
    log.write_bytes(PREFIX)
    caught_up, seen = asyncio.Event(), {}

    def emit(e: dict) -> None:
        if e["event"] == "phase":
            caught_up.set()
        if e["event"] in ("ready", "crash"):
            seen.setdefault("t", time.perf_counter_ns())

    make = lambda: SshTransport("ct129", config=[str(srv.ssh_config)])  # noqa: E731
    task = asyncio.create_task(
        follow(Session(Watch("ct129"), make, log=str(log)), "ready", 60, emit)
    )
    await caught_up.wait()
    await asyncio.sleep(random.uniform(0.05, 0.15))
    t0 = append(log, line)
    code = await task
    done = time.perf_counter_ns()
    assert code == (following.READY if line is READY else following.CRASHED), code
    return (seen["t"] - t0) / 1e6, (done - t0) / 1e6


def cli_trial(env: dict[str, str], log: Path) -> float:
    """ms from the ready line to the exit of a running `sgwatch wait`."""
    log.write_bytes(PREFIX)
    cmd = [sys.executable, "-m", "sgwatch", "wait", "ct129", "--log", str(log), "--timeout", "60"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    while " phase " not in proc.stdout.readline():  # caught up: it printed the state
        pass
    time.sleep(random.uniform(0.05, 0.15))
    t0 = append(log, READY)
    proc.stdout.read()
    assert proc.wait() == 0
    return (time.perf_counter_ns() - t0) / 1e6


async def polling_trial(conn: asyncssh.SSHClientConnection, log: Path, period: float) -> float:
    log.write_bytes(PREFIX)

    async def poll() -> int:
        while True:
            await asyncio.sleep(period)
            r = await conn.run(f"tail -20 {log}", encoding=None)
            if b"ready to roll" in r.stdout:
                return time.perf_counter_ns()

    task = asyncio.create_task(poll())
    await asyncio.sleep(random.uniform(0, period))
    t0 = append(log, READY)
    return (await task - t0) / 1e6


def cli_env(srv: SshdServer, home: Path) -> dict[str, str]:
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "config").write_text(srv.ssh_config.read_text())
    (home / ".ssh" / "known_hosts").write_text(srv.host_key_line())
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    return {**env, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


async def measure(srv: SshdServer, tmp: Path, trials: int, period: float) -> dict:
    log = tmp / "server.log"
    out: dict[str, list[float]] = {}
    for name, line in (("ready", READY), ("crash", CRASH)):
        pairs = [await sgwatch_trial(srv, log, line) for _ in range(trials)]
        out[f"sgwatch follow(): {name} event emitted"] = [p[0] for p in pairs]
        out[f"sgwatch follow(): {name}, returned (session closed)"] = [p[1] for p in pairs]
    env = cli_env(srv, tmp / "home")
    cli = [await asyncio.to_thread(cli_trial, env, log) for _ in range(max(3, trials // 4))]
    out["`sgwatch wait` process: ready, exited"] = cli
    async with asyncssh.connect("ct129", config=[str(srv.ssh_config)]) as conn:
        polls = [await polling_trial(conn, log, period) for _ in range(max(3, trials // 2))]
    out[f"baseline: `sleep {period:g} && tail -20` loop"] = polls
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--period", type=float, default=2.0, help="the baseline's sleep, seconds")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        srv = SshdServer(Path(tmp) / "sshd").start()
        try:
            results = asyncio.run(measure(srv, Path(tmp), args.trials, args.period))
        finally:
            srv.kill_remote_processes()
            srv.stop()
    base = statistics.mean(next(reversed(results.values())))
    print(f"{args.trials} trials per sgwatch row; the line appended 50-150 ms after catch-up\n")
    print("| detector | trials | median ms | p95 ms | max ms | mean ms | baseline mean / mean |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, ms in results.items():
        p95 = statistics.quantiles(ms, n=20, method="inclusive")[18] if len(ms) >= 2 else ms[0]
        mean = statistics.mean(ms)
        print(
            f"| {name} | {len(ms)} | {statistics.median(ms):.1f} | {p95:.1f} | {max(ms):.1f} "
            f"| {mean:.1f} | {base / mean:.0f}x |"
        )
    print(f"\nwith the usual `sleep 120` the baseline's mean is ~60 s ({args.period:g} s here)")


if __name__ == "__main__":
    main()
