"""How far off the ETAs are: a bar's recent-rate estimate (core/eta.py) against the
bar's average rate (what the ETA was before), replayed frame by frame; and the time
to ready estimated from an earlier run of the same command, replayed line by line.

Sources: simulated warmups (the project's simulator, several seeds and flag sets,
read from its output as a live session would), the bundled sample, and the real
logs in $SGWATCH_LOG_CORPUS whose bars carry tqdm's elapsed clock. For each bar of
at least MIN_ITEMS items and MIN_SECONDS that finished, at the first frame past 10 %, 50 % and 90 %
of its items: the error of each estimate relative to the time the bar really had
left (tqdm's own clock at its last frame). Medians over the bars of each run, and
over the runs, with their spread (min-max). Goal: within 25 % from 10 % on.

    python bench/eta.py [--seeds N] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

from sgwatch.core import events as ev
from sgwatch.core.eta import Earlier, ready_eta
from sgwatch.core.state import ServerState, seconds_between
from sgwatch.live.ingest import LogIngest

MIN_ITEMS = 10
MIN_SECONDS = 10  # a shorter bar is a few ticks of tqdm's whole-second clock
POINTS = (0.1, 0.5, 0.9)
SIM_FLAGS = {
    "Qwen3-8B": ("--model-path", "Qwen/Qwen3-8B"),
    "Qwen3-8B piecewise": ("--model-path", "Qwen/Qwen3-8B", "--enforce-piecewise-cuda-graph"),
}


def bars(data: bytes, min_seconds: float) -> list[list[tuple[int, int, float, float | None]]]:
    """Each finished bar's frames: (done, total, tqdm elapsed, recent-rate ETA), as the
    state saw them line by line."""
    ingest = LogIngest()
    seen: dict[int, list[tuple[int, int, float, float | None]]] = {}
    caps = {}
    for line in data.splitlines(keepends=True):
        ingest.feed(line)
        for cap in ingest.state.captures:
            if cap.done is None or cap.total is None or cap.bar_elapsed_s is None:
                continue
            frames = seen.setdefault(id(cap), [])
            caps[id(cap)] = cap
            frame = (cap.done, cap.total, cap.bar_elapsed_s, cap.eta_s)
            if not frames or frames[-1][:3] != frame[:3]:
                frames.append(frame)
    return [
        f
        for key, f in seen.items()
        if f
        and f[-1][0] == f[-1][1] >= MIN_ITEMS
        and f[-1][2] >= min_seconds
        and not caps[key].open
    ]


Errors = dict[float, tuple[float, float, float]]


def errors(frames: list[tuple[int, int, float, float | None]]) -> Errors:
    """At each point: the recent-rate and the average-rate error relative to the time
    left, and the recent-rate error in seconds."""
    end = frames[-1][2]
    out = {}
    for p in POINTS:
        at = next((f for f in frames if f[0] >= p * f[1] and f[0] < f[1]), None)
        if at is None:
            continue
        done, total, elapsed, eta = at
        left = end - elapsed
        if left <= 0 or eta is None:
            continue
        old = elapsed * (total - done) / done  # the bar's average rate: tqdm's own ETA
        out[p] = (abs(eta - left) / left, abs(old - left) / left, abs(eta - left))
    return out


def run_errors(data: bytes, min_seconds: float = MIN_SECONDS) -> Errors:
    """Median errors over the bars of one log, per point."""
    per_point: dict[float, list[tuple[float, float, float]]] = {}
    for frames in bars(data, min_seconds):
        for p, e in errors(frames).items():
            per_point.setdefault(p, []).append(e)
    return {p: tuple(map(statistics.median, zip(*v, strict=True))) for p, v in per_point.items()}


def simulate(flags: tuple[str, ...], seed: int) -> bytes:
    """A simulated warmup's output up to its ready line."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [sys.executable, "-m", "sgwatch.sim", *flags, "--port", str(port)]
    argv += ["--host", "127.0.0.1", "--sim-speed", "100", "--sim-seed", str(seed)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = bytearray()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            out += line
            if b"fired up and ready to roll" in line:
                break
    finally:
        proc.kill()
        proc.wait()
    return bytes(out)


def spent(s: ServerState) -> dict[str, float]:
    """Seconds in each phase so far, the current one to the log's latest time."""
    out: dict[str, float] = {}
    for p in s.phases:
        took = p.seconds if p.ended_at is not None else seconds_between(p.started_at, s.now_ts)
        out[p.name] = out.get(p.name, 0.0) + (took or 0.0)
    return out


def earlier_run(data: bytes) -> Earlier:
    """A finished warmup as the history keeps it: seconds per phase, and to ready."""
    ingest = LogIngest()
    ingest.feed(data)
    ingest.flush()
    s = ingest.state
    total = seconds_between(s.phases[0].started_at, s.ready_at)
    assert total is not None, "the run did not reach ready"
    return Earlier(frozenset(), spent(s), total)


def ready_errors(earlier: list[Earlier], data: bytes) -> Errors:
    """At 10/50/90 % of a run's warmup (log time): the error of its time to ready as
    estimated from `earlier` runs of the same command, relative to the time really
    left; the error of the earlier runs' median warmup minus the time spent, for
    comparison; and the first error in seconds."""
    total = earlier_run(data).warmup_s
    ingest, out = LogIngest(), {}
    for line in data.splitlines(keepends=True):
        ingest.feed(line)
        s = ingest.state
        if s.state not in ev.WARMUP_PHASES or not s.phases:
            continue
        elapsed = seconds_between(s.phases[0].started_at, s.now_ts) or 0.0
        for p in POINTS:
            if p in out or elapsed < p * total:
                continue
            left = total - elapsed
            eta = ready_eta(frozenset(), earlier, spent(s), s.state)
            if eta is None or left <= 0:
                continue
            whole = max(0.0, statistics.median(e.warmup_s for e in earlier) - elapsed)
            out[p] = (
                abs(eta.seconds - left) / left,
                abs(whole - left) / left,
                abs(eta.seconds - left),
            )
    return out


def show(name: str, runs: list[Errors]) -> None:
    cells = []
    for p in POINTS:
        new = [r[p][0] for r in runs if p in r]
        old = [r[p][1] for r in runs if p in r]
        secs = [r[p][2] for r in runs if p in r]
        if not new:
            cells.append("-")
            continue
        spread = f" ({min(new):.0%}-{max(new):.0%})" if len(new) > 1 else ""
        cells.append(
            f"{statistics.median(new):.0%}{spread}, {statistics.median(secs):.1f} s "
            f"[was {statistics.median(old):.0%}]"
        )
    print(f"| {name} | {len(runs)} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--corpus", default=os.environ.get("SGWATCH_LOG_CORPUS"))
    ap.add_argument(
        "--corpus-min-seconds",
        type=float,
        default=MIN_SECONDS,
        help="the shortest corpus bar counted (the corpus has few long ones)",
    )
    args = ap.parse_args()
    print("| source | runs | at 10 % | at 50 % | at 90 % |")
    print("|---|---|---|---|---|")
    logs = {
        name: [simulate(flags, s) for s in range(args.seeds + 1)]
        for name, flags in SIM_FLAGS.items()
    }
    for name, runs in logs.items():
        show(f"simulator, {name}", [run_errors(data) for data in runs[1:]])
    sample = files("sgwatch.samples").joinpath("qwen27b-tp2-warmup.log").read_bytes()
    show("bundled sample (Qwen3.6-27B TP2)", [run_errors(sample)])
    if args.corpus:
        for path in sorted(Path(args.corpus).glob("sglang-*.log")):
            result = run_errors(path.read_bytes(), args.corpus_min_seconds)
            if result:
                show(f"corpus: {path.name}", [result])
    print("\ntime to ready, from the first run (seed 0) of the same command [was: its warmup")
    print("less the time spent]\n")
    print("| source | runs | at 10 % | at 50 % | at 90 % |")
    print("|---|---|---|---|---|")
    for name, runs in logs.items():
        first = [earlier_run(runs[0])]
        show(f"simulator, {name}", [ready_errors(first, data) for data in runs[1:]])


if __name__ == "__main__":
    main()
