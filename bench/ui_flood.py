"""Dashboard responsiveness under a log flood, and its idle cost.

1. Key press to screen: press `l` (layout toggle) and wait until the app has
   handled it and repainted; p50/p95 over many presses, first with an idle
   log (the baseline), then while 20,000 log lines/s stream in. Goal: p95
   under the flood <= 100 ms.
2. Memory: RSS before and after the flood (all buffers are bounded).
3. Idle: CPU share of one core with 1 log line/s and GPU samples at 2 Hz,
   against a bare Textual app with a footer only, in the same run. Goal <= 2 %.

Headless (App.run_test), 140x45.   python bench/ui_flood.py [--seconds S]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import time

from textual.app import App, ComposeResult
from textual.widgets import Footer

from sgwatch.ui.app import SgwatchApp
from sgwatch.watch import Watch

SIZE = (140, 45)
FLOOD_LINES_S = 20_000
TICK_S = 0.01


def serving_lines(n: int) -> list[bytes]:
    return [
        f"[2026-11-30 10:{i // 600 % 60:02d}:{i // 10 % 60:02d} TP0] Decode batch, "
        f"#running-req: {i % 50}, #token: {1000 + i}, token usage: 0.{i % 100:02d}, "
        f"cuda graph: True, gen throughput (token/s): {100 + i % 900}.{i % 100:02d}, "
        f"#queue-req: {i % 7}\n".encode()
        for i in range(n)
    ]


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def key_latencies(pilot, presses: int) -> list[float]:
    out = []
    for _ in range(presses):
        t0 = time.perf_counter()
        await pilot.press("l")
        await pilot.pause()
        out.append((time.perf_counter() - t0) * 1000)
    return out


async def flood(watch: Watch, lines: list[bytes], stop: asyncio.Event) -> int:
    per_tick = int(FLOOD_LINES_S * TICK_S)
    sent = 0
    while not stop.is_set():
        t0 = time.perf_counter()
        chunk = b"".join(lines[(sent + k) % len(lines)] for k in range(per_tick))
        watch.feed(chunk)
        sent += per_tick
        await asyncio.sleep(max(0.0, TICK_S - (time.perf_counter() - t0)))
    return sent


async def responsiveness(presses: int, seconds: float) -> None:
    lines = serving_lines(50_000)
    watch = Watch("bench")
    app = SgwatchApp([watch], bell=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)
        idle = await key_latencies(pilot, presses)
        rss0 = rss_mb()
        stop = asyncio.Event()
        task = asyncio.create_task(flood(watch, lines, stop))
        await asyncio.sleep(1.0)  # let the flood reach steady state
        t0 = time.perf_counter()
        flooded = await key_latencies(pilot, presses)
        remaining = seconds - (time.perf_counter() - t0)
        if remaining > 0:
            await asyncio.sleep(remaining)
        stop.set()
        sent = await task
        elapsed = time.perf_counter() - t0 + 1.0
        rss1 = rss_mb()
        shown = watch.state.lines
    idle95, flood95 = p95(idle), p95(flooded)
    print(
        f"flood: {sent:,} lines in {elapsed:.1f} s ({sent / elapsed:,.0f} lines/s), "
        f"{shown:,} parsed"
    )
    print(f"  key->screen idle    p50 {statistics.median(idle):6.1f} ms  p95 {idle95:6.1f} ms")
    print(
        f"  key->screen flooded p50 {statistics.median(flooded):6.1f} ms  p95 {flood95:6.1f} ms"
        f"  ({flood95 / idle95:.2f}x idle; goal <= 100 ms)"
    )
    print(f"  RSS {rss0:.0f} MB -> {rss1:.0f} MB after the flood")


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[94]


async def cpu_share(app: App, feed, seconds: float) -> float:
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(1.0)
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


async def idle_cost(seconds: float) -> None:
    bare = await cpu_share(BareApp(), lambda _t: None, seconds)
    watch = Watch("bench")
    lines = serving_lines(1000)

    def trickle(tick: int) -> None:
        watch.feed_gpu(b"0, NVIDIA H100 80GB HBM3, 37, 61234, 81559, 212.50, 51\n")
        if tick % 2 == 0:
            watch.feed(lines[tick % len(lines)])

    ours = await cpu_share(SgwatchApp([watch], bell=False), trickle, seconds)
    print(
        f"idle: bare Textual app {bare:.1%} of a core, sgwatch (1 line/s, GPU 2 Hz) "
        f"{ours:.1%} ({ours / bare if bare else float('inf'):.2f}x bare; goal <= 2 %)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--presses", type=int, default=40)
    args = ap.parse_args()
    asyncio.run(responsiveness(args.presses, args.seconds))
    asyncio.run(idle_cost(args.seconds))


if __name__ == "__main__":
    main()
