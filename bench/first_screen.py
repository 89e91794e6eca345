"""Connecting to a host whose server log is long: time to the first screen and to the
whole run's state, against OpenSSH reading the same file in the same run.

Baselines: `ssh ct129 tail -20 FILE` (what a person types to see where the server
is) and `ssh ct129 cat FILE > /dev/null` (every byte once). sgwatch: a Session
following the file (`--log`, so no discovery) from its start until (1) the Watch
shows the log's tail and a state (its last bytes arrive first), then (2) the
whole run's state is built (caught up): a past this long is read by two processes
(live/pastsplit.py). Goals (issue 14): first screen <= tail + 1 s;
whole state <= 4x cat. Median and spread over --repeat runs, with sgwatch's own CPU
time for the whole state (the rest is waiting on the link) and the machine's load
average (1 min) over the runs: the baselines and sgwatch share its cores. Each run
also reads the past in one process (as before the split), for the same-run A/B.

    python bench/first_screen.py [--mb 1000] [--repeat 3]
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import long_log, long_log_options, session_on, sshd

from sgwatch.live.options import Options
from sgwatch.live.watch import Watch
from tests.integration.sshd import SshdServer


def ssh(srv: SshdServer, *cmd: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        ["ssh", "-F", str(srv.ssh_config), "ct129", *cmd], stdout=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - t0


async def follow(srv: SshdServer, log: Path, split: bool = True) -> tuple[float, float, str | None]:
    """Seconds to the first screen (the tail's lines and state), and to the whole state;
    how the past's two parts were joined (Session.past_split; None: one process)."""
    watch = Watch("ct129")
    t0 = time.perf_counter()
    first: float | None = None
    done = asyncio.Event()

    def look() -> None:
        nonlocal first
        if first is None and watch.state.lines and watch.history is not None:
            first = time.perf_counter() - t0
        if watch.caught_up:
            done.set()

    watch.listen(look)  # every feed
    watch.subscribe(lambda _: look())  # caught up: the past's transitions are published
    # not split: the past in one process, as before it was split
    session = session_on(srv, watch, log, Options() if split else Options(split_from=1 << 62))
    task = asyncio.create_task(session.run())
    await done.wait()
    whole = time.perf_counter() - t0
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await session.link.close()
    return (first if first is not None else whole), whole, session.past_split


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} s ({min(xs):.2f}-{max(xs):.2f})"


def main() -> None:
    args = long_log_options(__doc__)
    with sshd() as (srv, tmp):
        log = long_log(tmp / "server.log", args.mb)
        size = log.stat().st_size
        tail, cat, first, whole, cpu, load, joins, alone = [], [], [], [], [], [], [], []
        for _ in range(args.repeat):
            load.append(os.getloadavg()[0])
            tail.append(ssh(srv, "tail", "-20", str(log)))
            cat.append(ssh(srv, "cat", str(log)))
            t0 = time.process_time()
            f_s, w_s, how = asyncio.run(follow(srv, log))
            joins.append(how)
            cpu.append(time.process_time() - t0)
            alone.append(asyncio.run(follow(srv, log, split=False))[1])
            first.append(f_s)
            whole.append(w_s)
        load.append(os.getloadavg()[0])
    print(
        f"log: {size / 1e6:.0f} MB; median (min-max) of {args.repeat} runs; "
        f"load average {min(load):.1f}-{max(load):.1f}\n"
    )
    print("| what | seconds | vs baseline |\n|---|---:|---:|")
    print(f"| `ssh ct129 tail -20 LOG` (baseline) | {spread(tail)} | |")
    rel = [f - t for f, t in zip(first, tail, strict=True)]
    print(f"| sgwatch: first screen (tail + state) | {spread(first)} | +{spread(rel)} |")
    print(f"| `ssh ct129 cat LOG` (baseline) | {spread(cat)} | |")
    ratio = [w / c for w, c in zip(whole, cat, strict=True)]
    print(
        f"| sgwatch: whole run's state | {spread(whole)} | "
        f"{statistics.median(ratio):.1f}x ({min(ratio):.1f}-{max(ratio):.1f}x) |"
    )
    print(f"| sgwatch's CPU time meanwhile (its worker's not counted) | {spread(cpu)} | |")
    ratio = [w / c for w, c in zip(alone, cat, strict=True)]
    print(
        f"| the same, the past in one process | {spread(alone)} | "
        f"{statistics.median(ratio):.1f}x ({min(ratio):.1f}-{max(ratio):.1f}x) |"
    )
    print(f"\nthe past's two parts, run by run: {joins}")


if __name__ == "__main__":
    main()
