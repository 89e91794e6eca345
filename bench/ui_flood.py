"""Dashboard responsiveness under a log flood, and its idle cost.

1. Key press to screen: `l` (layout toggle, the costliest key: a full relayout)
   sent to the driver, timed to the first frame that shows the new layout;
   p50/p95 over many presses, first with an idle log (goal: p95 <= 60 ms), then
   while 20,000 log lines/s are fed on the app's event loop, as an SSH pump
   feeds them (goal: p95 <= 100 ms).
2. Memory: RSS before and after the flood (all buffers are bounded).
3. Idle (measured first): CPU share of one core with 1 log line/s and GPU
   samples at 2 Hz, against a bare Textual app with a footer only, in the same
   run. Goal <= 1.5 %.

Each of --repeat runs is a fresh process (one app a process, as a user runs it);
the summary gives the median and spread, and in how many runs each goal was met.
--strip-caches A/B: each repeat also runs once with Textual's own strips (all seven memo
caches a strip makes; ui/strips.py keeps two), alternating which goes first, and the summary
adds each measure's ratio (ours / with caches) over the pairs.
Headless (App.run_test), 140x45.   python bench/ui_flood.py [--seconds S] [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Footer

from sgwatch.live.watch import Watch
from sgwatch.ui import strips
from sgwatch.ui.app import SgwatchApp

SIZE = (140, 45)
FLOOD_LINES_S = 20_000
TICK_S = 0.01


def serving_lines(n: int, first: int = 0) -> list[bytes]:
    """n SGLang decode lines, their figures varying with each line's number from `first`."""
    return [
        f"[2026-11-30 10:{i // 600 % 60:02d}:{i // 10 % 60:02d} TP0] Decode batch, "
        f"#running-req: {i % 50}, #token: {1000 + i}, token usage: 0.{i % 100:02d}, "
        f"cuda graph: True, gen throughput (token/s): {100 + i % 900}.{i % 100:02d}, "
        f"#queue-req: {i % 7}\n".encode()
        for i in range(first, first + n)
    ]


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def key_latencies(app: SgwatchApp, presses: int) -> list[float]:
    """Milliseconds from a key event to the first frame that shows its effect.

    `pilot.press`/`pause` wait until the process goes idle (up to 1 s each), which
    a continuous flood never does, so they measure the flood, not the key. Here the
    key goes straight to the driver, and a spy on `App._display` (called once per
    frame the compositor produces) stops the clock at the first frame in which the
    log pane sits where the new layout puts it (x = 0 when stacked)."""
    log, pane = app.pane.log_pane, app.pane
    display = app._display
    waiting: list[tuple[bool, asyncio.Future[float]]] = []

    def spy(screen, renderable) -> None:
        display(screen, renderable)
        if waiting and renderable is not None and not app._batch_count:
            stacked, done = waiting[0]
            if (log.region.x == 0) == stacked and not done.done():
                done.set_result(time.perf_counter())

    app._display = spy
    out = []
    try:
        for _ in range(presses):
            await asyncio.sleep(random.uniform(0.05, 0.15))  # not in step with the frame timer
            done = asyncio.get_running_loop().create_future()
            waiting[:] = [(not pane.stacked, done)]
            t0 = time.perf_counter()
            app._driver.send_message(events.Key("l", "l"))
            out.append((await asyncio.wait_for(done, 10) - t0) * 1000)
    finally:
        app._display = display
    return out


async def flood(watch: Watch, lines: list[bytes], stop: asyncio.Event) -> int:
    """Feed FLOOD_LINES_S on the app's event loop, as an SSH pump does; a late tick
    catches up (sends what the elapsed time is owed), so a slow app gets the whole flood."""
    sent = 0
    t0 = time.perf_counter()
    while not stop.is_set():
        due = int((time.perf_counter() - t0) * FLOOD_LINES_S) - sent
        if due > 0:
            watch.feed(b"".join(lines[(sent + k) % len(lines)] for k in range(due)))
            sent += due
        await asyncio.sleep(TICK_S)
    return sent


async def responsiveness(presses: int, seconds: float) -> dict[str, float]:
    lines = serving_lines(50_000)
    watch = Watch("bench")
    app = SgwatchApp([watch], bell=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)
        idle = await key_latencies(app, presses)
        rss0 = rss_mb()
        stop = asyncio.Event()
        task = asyncio.create_task(flood(watch, lines, stop))
        await asyncio.sleep(1.0)  # let the flood reach steady state
        t0 = time.perf_counter()
        flooded = await key_latencies(app, presses)
        remaining = seconds - (time.perf_counter() - t0)
        if remaining > 0:
            await asyncio.sleep(remaining)
        stop.set()
        sent = await task
        elapsed = time.perf_counter() - t0 + 1.0
        rss1 = rss_mb()
        shown = watch.state.lines
    print(
        f"  flood: {sent:,} lines in {elapsed:.1f} s ({sent / elapsed:,.0f} lines/s), "
        f"{shown:,} parsed; RSS {rss0:.0f} -> {rss1:.0f} MB",
        file=sys.stderr,
    )
    return {
        "idle_p50": statistics.median(idle),
        "idle_p95": p95(idle),
        "flood_p50": statistics.median(flooded),
        "flood_p95": p95(flooded),
        "rss_mb": rss1,
    }


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[94]


async def cpu_share(app: App, feed, seconds: float) -> float:
    async with app.run_test(size=SIZE) as pilot:
        feed(0), feed(2)  # steady state: GPU rows mounted and the chart shown (two samples)
        await pilot.pause(2.0)
        u0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        end = t0 + seconds
        tick = 0
        while time.perf_counter() < end:
            await asyncio.sleep(0.5)
            tick += 1
            feed(tick)
        u1 = resource.getrusage(resource.RUSAGE_SELF)
        wall = time.perf_counter() - t0
    return (u1.ru_utime + u1.ru_stime - u0.ru_utime - u0.ru_stime) / wall


class BareApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Footer()


async def idle_cost(seconds: float) -> dict[str, float]:
    bare = await cpu_share(BareApp(), lambda _t: None, seconds)
    watch = Watch("bench")
    lines = serving_lines(1000)

    def trickle(tick: int) -> None:
        watch.feed_gpu(b"0, NVIDIA H100 80GB HBM3, 37, 61234, 81559, 212.50, 51\n")
        if tick % 2 == 0:
            watch.feed(lines[tick % len(lines)])

    ours = await cpu_share(SgwatchApp([watch], bell=False), trickle, seconds)
    return {"idle_cpu": ours * 100, "bare_cpu": bare * 100}


# measure, label, unit, goal (at most)
MEASURES = [
    ("idle_cpu", "idle CPU (1 line/s, GPU 2 Hz)", "%", 1.5),
    ("bare_cpu", "idle CPU, bare Textual app", "%", None),
    ("idle_p50", "key->screen idle p50", "ms", None),
    ("idle_p95", "key->screen idle p95", "ms", 60.0),
    ("flood_p50", "key->screen at 20,000 lines/s p50", "ms", None),
    ("flood_p95", "key->screen at 20,000 lines/s p95", "ms", 100.0),
    ("rss_mb", "RSS after the flood", "MB", None),
]


def once(seconds: float, presses: int, strip_caches: bool) -> dict[str, float]:
    if strip_caches:  # the apps call strips.lighten() as they are made: undo it after
        SgwatchApp.__init__ = with_strip_caches(SgwatchApp.__init__)
    # Idle first: a process that has just drawn a flood carries its heap and
    # garbage-collector state into the next app (a user runs one app a process).
    out = asyncio.run(idle_cost(seconds))
    out.update(asyncio.run(responsiveness(presses, seconds)))
    return out


def with_strip_caches(init):
    def restored(self, *args, **kwargs) -> None:
        init(self, *args, **kwargs)
        strips.restore()

    return restored


def child(args: argparse.Namespace, strip_caches: bool) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--once", "--seconds", str(args.seconds)]
    cmd += ["--presses", str(args.presses)] + ["--strip-caches"] * strip_caches
    out = subprocess.run(cmd, capture_output=True)
    if out.returncode:
        sys.exit(out.stderr.decode())
    return json.loads(out.stdout)


def summary(runs: list[dict[str, float]]) -> None:
    for key, label, unit, goal in MEASURES:
        values = [r[key] for r in runs]
        line = (
            f"  {label:<36} median {statistics.median(values):7.2f} {unit:<2} "
            f"(spread {min(values):.2f}-{max(values):.2f})"
        )
        if goal is not None:
            met = sum(v <= goal for v in values)
            line += f"  goal <= {goal:g} {unit}: met in {met} of {len(values)}"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--presses", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--strip-caches", action="store_true", help="A/B against Textual's strips")
    ap.add_argument("--once", action="store_true", help=argparse.SUPPRESS)  # one run: JSON
    args = ap.parse_args()
    if args.once:
        print(json.dumps(once(args.seconds, args.presses, args.strip_caches)))
        return
    runs, cached = [], []
    for i in range(args.repeat):
        order = [False, True][:: 1 if i % 2 == 0 else -1] if args.strip_caches else [False]
        for caches in order:
            run = child(args, caches)
            (cached if caches else runs).append(run)
            shown = "  ".join(f"{k} {run[k]:.2f}" for k, *_ in MEASURES)
            print(f"run {i + 1}{' (strip caches)' if caches else ''}: {shown}", flush=True)
    print(f"{args.repeat} runs, load average {os.getloadavg()[0]:.2f} at the end:")
    summary(runs)
    if args.strip_caches:
        print("with Textual's strip caches:")
        summary(cached)
        print("ours / with caches, per pair:")
        for key, label, _unit, _goal in MEASURES:
            ratios = [a[key] / b[key] for a, b in zip(runs, cached, strict=True) if b[key]]
            if not ratios:
                continue
            print(
                f"  {label:<36} median {statistics.median(ratios):5.2f} "
                f"(spread {min(ratios):.2f}-{max(ratios):.2f})"
            )


if __name__ == "__main__":
    main()
