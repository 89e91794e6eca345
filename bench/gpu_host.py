"""sgwatch's GPU stream against the nvidia-smi on this host: run it on a GPU box.

Needs no sgwatch dependencies, only the standard library: the parts used here are pure.
From a checkout, with no install: `mkdir -p /tmp/pkg && ln -sfn "$PWD/app"
/tmp/pkg/sgwatch && PYTHONPATH=/tmp/pkg python3 bench/gpu_host.py --out result.json`.

1. The stream's command exactly as sgwatch sends it over SSH (the stdin watchdog of
   transport/guard.py around remote/gpustream.py's `nvidia-smi ... -lms 500`), run with
   a pipe for stdin in a session of its own as sshd would: the time to its first row,
   whether every row parses as the GPU history reads it, and the time from its stdin's
   end (a closed channel) until no nvidia-smi of its session is left.
2. What a sample costs the host (CPU of children, user + system) over the same window,
   `repeats` times, alternating which goes first: one `nvidia-smi --query-gpu=...` a
   second (the `watch -n1` habit, the baseline) against one `-lms 500` loop.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import select
import signal
import statistics
import subprocess
import time
from pathlib import Path

from sgwatch.core.gpu_history import QUERY, GpuHistory
from sgwatch.remote.gpustream import gpu_command
from sgwatch.transport.guard import guarded

# One sample of the fields sgwatch's stream asks for, as a person or `watch` would ask.
ONE_SHOT = ["nvidia-smi", f"--query-gpu={','.join(QUERY)}", "--format=csv,noheader,nounits"]


def session_alive(sid: int) -> list[int]:
    """Live processes of session `sid` (the stream's shell, watchdog and nvidia-smi; an
    ended one not yet reaped does not count)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if os.getsid(int(entry.name)) == sid and state != "Z":
                    out.append(int(entry.name))
            except (ProcessLookupError, FileNotFoundError):
                pass
    return out


def stream(seconds: float) -> dict:
    cmd = guarded(gpu_command(500, QUERY))
    started = time.monotonic()
    proc = subprocess.Popen(["/bin/sh", "-c", cmd], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, start_new_session=True)  # fmt: skip
    history, arrivals, buf = GpuHistory(), [], b""
    while time.monotonic() - started < seconds:
        ready, _, _ = select.select([proc.stdout], [], [], 0.1)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            *lines, buf = (buf + chunk).split(b"\n")
            for line in lines:
                if line.startswith(b"0,"):  # a sample of the first GPU: one a loop
                    arrivals.append(time.monotonic() - started)
                history.add_line(line.decode())
    closed = time.monotonic()
    proc.stdin.close()  # what a closed channel does to the stream on the host
    while session_alive(proc.pid) and time.monotonic() - closed < 10:
        time.sleep(0.01)
    left = session_alive(proc.pid)
    gone_ms = round((time.monotonic() - closed) * 1000)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    proc.wait()
    return {
        "command": cmd,
        "first_row_s": round(arrivals[0], 3) if arrivals else None,
        "samples": len(arrivals),
        "gpus": len(history.gpus),
        "bad_rows": history.bad_rows,
        "gaps_s_median": round(statistics.median(
            b - a for a, b in itertools.pairwise(arrivals)), 3) if len(arrivals) > 2 else None,
        "gone_after_stdin_end_ms": None if left else gone_ms,
        "left_after_10s": len(left),
        "exit_status": proc.returncode,
    }  # fmt: skip


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_shots(seconds: float) -> float:
    """The baseline: one nvidia-smi a second. CPU seconds per minute."""
    before, start = children_cpu(), time.monotonic()
    while time.monotonic() - start < seconds:
        tick = time.monotonic()
        subprocess.run(ONE_SHOT, stdout=subprocess.DEVNULL, check=True)
        time.sleep(max(0.0, 1 - (time.monotonic() - tick)))
    return (children_cpu() - before) * 60 / seconds


def loop(seconds: float) -> float:
    """sgwatch's way: one long-lived `-lms 500` loop. CPU seconds per minute."""
    before = children_cpu()
    proc = subprocess.Popen([*ONE_SHOT, "-lms", "500"], stdout=subprocess.DEVNULL)
    time.sleep(seconds)
    proc.terminate()
    proc.wait()
    return (children_cpu() - before) * 60 / seconds


def startup(n: int) -> list[float]:
    """Seconds one `nvidia-smi --query-gpu=...` takes, start to end."""
    out = []
    for _ in range(n):
        start = time.monotonic()
        subprocess.run(ONE_SHOT, stdout=subprocess.DEVNULL, check=True)
        out.append(time.monotonic() - start)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seconds", type=float, default=15, help="each cost window")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    result: dict = {"stream": stream(5)}
    starts = startup(10)
    result["one_shot_s"] = {"median": round(statistics.median(starts), 3),
                            "min_max": [round(min(starts), 3), round(max(starts), 3)]}  # fmt: skip
    pairs = []
    for i in range(args.repeats):
        order = (one_shots, loop) if i % 2 == 0 else (loop, one_shots)
        got = {f.__name__: f(args.seconds) for f in order}
        pairs.append({k: round(v, 3) for k, v in got.items()}
                     | {"ratio": round(got["loop"] / got["one_shots"], 3)})  # fmt: skip
    ratios = [p["ratio"] for p in pairs]
    result["cpu_s_per_minute"] = pairs
    result["loop_over_one_shots"] = {"median": statistics.median(ratios),
                                     "min_max": [min(ratios), max(ratios)]}  # fmt: skip
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
