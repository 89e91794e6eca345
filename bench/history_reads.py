"""What a restart costs the dashboard in history reads, with the host's history at its
bound (control/history.py, MAX_BYTES: about 1,400 runs, days of restarts every few
minutes). At each restart the dashboard asks for the earlier runs of the model (the
ETA to ready), the last good command and the past logs.

Baseline: a History made anew at each restart, which reads the whole file (what every
restart cost before a History kept what it read). Measured: one History kept across
the restarts, which reads the lines appended since. Each restart appends a launch and
its outcome as the dashboard does. Milliseconds per restart (median and min-max over
the repeats), and the peak of Python's allocations during one restart (tracemalloc,
a pass of its own: tracing slows the code).

    python bench/history_reads.py [--restarts N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from sgwatch.control import history
from sgwatch.control.history import History
from sgwatch.core.cmdline import parse

CMD = parse(["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"])
CMD = parse([*CMD.argv, "--tp", "2", "--cuda-graph-max-bs", "16", "--port", "30000"])
IDENTITY = {"model": "Qwen/Qwen3-8B", "parallel": "tp2"}
PHASES = {"starting": 5.0, "loading_weights": 40.0, "allocating_kv_cache": 3.0}
READY = {"warmup_seconds": 90.0, "phases": {**PHASES, "capturing_graphs": 38.0}}
READY |= {"weights_gb": 14.91, "graph_mem_gb": 0.38, "kv_tokens": 392312}


def fill(path: Path, room: int, argv: list[str] = CMD.argv, identity: dict = IDENTITY) -> int:
    """A history `room` bytes under its bound, of runs of `argv` that reached ready, one
    every 5 minutes; returns its runs. (`bench/soak.py --history-full` starts with one.)"""
    ready = {**READY, **identity}
    lines, runs, size = [], 0, 0
    while size < history.MAX_BYTES - room:
        rid, at = f"{1.79e9 + runs * 300:.6f}-{runs}", 1.79e9 + runs * 300
        launch = {"id": rid, "time": at, "argv": argv, "cwd": "/srv", "pid": runs}
        launch["log"] = "/srv/server.log"
        for rec in (launch, {"id": rid, "outcome": "ready", **ready}, {"id": rid, "tok_s": 63.7}):
            lines.append(json.dumps(rec, separators=(",", ":")) + "\n")
            size += len(lines[-1])
        runs += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines))
    return runs


def restart(h: History, pid: int) -> None:
    """What the dashboard asks of the history at a restart."""
    run_id = h.launched(CMD, "/srv", pid, "/srv/server.log")
    h.earlier(IDENTITY, run_id)
    h.last_good()
    h.logs()
    h.outcome(run_id, "ready", **READY, **IDENTITY)


def per_restart(restarts: int, folder: Path, anew: bool) -> float:
    kept = History("gpu", folder)
    kept.runs()  # read when the dashboard opened
    t = time.perf_counter()
    for pid in range(restarts):
        restart(History("gpu", folder) if anew else kept, pid)
    return (time.perf_counter() - t) / restarts * 1000


def peak_kib(make: Callable[[], History]) -> float:
    restart(make(), 0)  # a kept History has read the file by now
    tracemalloc.start()
    restart(make(), 1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--restarts", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = History("gpu", folder).path
        runs = fill(path, room=(args.restarts + 2) * 1_000)
        print(f"history at its bound: {runs} runs, {path.stat().st_size:,} bytes")
        original = path.read_bytes()
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(args.repeat):
            for anew in (True, False):
                path.write_bytes(original)
                times[anew].append(per_restart(args.restarts, folder, anew))
        path.write_bytes(original)
        kept = History("gpu", folder)
        peaks = {True: peak_kib(lambda: History("gpu", folder)), False: peak_kib(lambda: kept)}
    for anew, label in ((True, "read whole (baseline)"), (False, "kept, reads appended")):
        ms = times[anew]
        print(
            f"{label:24} {statistics.median(ms):8.1f} ms a restart "
            f"(min-max {min(ms):.1f}-{max(ms):.1f}), peak {peaks[anew]:,.0f} KiB"
        )
    ratio = statistics.median(times[False]) / statistics.median(times[True])
    print(f"kept / baseline: {ratio:.3f} of the time")


if __name__ == "__main__":
    main()
