"""The fleet table at 500 rows: idle CPU, and key press to screen.

The rows come from bench/fleet_demo.py's scripted source (no Prometheus: this
measures the table, not the source), every figure moving at each refresh, as a
busy fleet's do. Idle: the app as `sgwatch fleet` runs it (a refresh every 5 s),
CPU time over wall time. Keys: `s` (sort: the table built again in another
order), `g` (group: headings added), `down` (the cursor) and a filter's letter,
each timed from the key event to the first frame that shows its effect (as
bench/ui_flood.py times its key). Goals (issue 26): key p95 <= 100 ms, idle <= 2 %
of a core.

    python bench/fleet_keys.py [--rows 500] [--idle 30] [--presses 40] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fleet_demo import ScriptedSource
from textual import events

from sgwatch.ui.fleet_app import FleetApp

SIZE = (140, 45)


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[94]


async def idle_cpu(rows: int, seconds: float) -> float:
    """Percent of a core, the app refreshing every 5 s as it does by default."""
    app = FleetApp(ScriptedSource(rows))
    async with app.run_test(size=SIZE) as pilot:
        while app.refreshes < 1:
            await pilot.pause(0.1)
        await asyncio.sleep(1.0)  # the first frame's work done
        u0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        await asyncio.sleep(seconds)
        u1, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - t0
    return (u1.ru_utime + u1.ru_stime - u0.ru_utime - u0.ru_stime) / wall * 100


async def key_times(rows: int, presses: int) -> dict[str, list[float]]:
    """Milliseconds from each key to the first frame that shows what it did, and the
    process's CPU time meanwhile ("KEY cpu": what load on a shared machine moves less)."""
    app = FleetApp(ScriptedSource(rows))
    out: dict[str, list[float]] = {"s": [], "g": [], "down": [], "filter": []}
    cpu: dict[str, list[float]] = {k: [] for k in out}  # the process's CPU time per key
    async with app.run_test(size=SIZE) as pilot:
        while app.refreshes < 1:
            await pilot.pause(0.1)
        view, table = app.view, app.view.table
        display = app._display
        waiting: list[tuple[Callable[[], bool], asyncio.Future[float]]] = []

        def spy(screen, renderable) -> None:
            display(screen, renderable)
            if waiting and renderable is not None and not app._batch_count:
                shown, done = waiting[0]
                if shown() and not done.done():
                    done.set_result(time.perf_counter())

        async def press(key: str, char: str | None, shown: Callable[[], bool]) -> float:
            await asyncio.sleep(random.uniform(0.05, 0.15))  # not in step with any timer
            done = asyncio.get_running_loop().create_future()
            waiting[:] = [(shown, done)]
            t0, c0 = time.perf_counter(), time.process_time()
            app._driver.send_message(events.Key(key, char))
            wall = (await asyncio.wait_for(done, 10) - t0) * 1000
            cpu[key if key in out else "filter"].append((time.process_time() - c0) * 1000)
            return wall

        app._display = spy
        try:
            for _ in range(presses):
                sort = view.sort
                out["s"].append(await press("s", "s", lambda s=sort: view.sort is not s))
                group = view.group
                out["g"].append(await press("g", "g", lambda g=group: view.group != g))
                row = table.cursor_row
                out["down"].append(await press("down", None, lambda r=row: table.cursor_row != r))
            await pilot.press("slash")
            while app.focused is not app.query_one("#filter"):
                await pilot.pause(0.05)
            for i in range(presses):
                letter = "0123456789"[i % 10]  # digits of the instances' addresses
                needle = view.needle
                out["filter"].append(await press(letter, letter, lambda n=needle: view.needle != n))
                if len(view.needle) >= 3:
                    app.query_one("#filter").value = ""
                    await pilot.pause(0.05)
        finally:
            app._display = display
    return {**out, **{f"{k} cpu": v for k, v in cpu.items()}}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=500)
    p.add_argument("--idle", type=float, default=30.0, help="seconds of idle to measure")
    p.add_argument("--presses", type=int, default=40, help="presses of each key")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    runs = []
    for _ in range(args.repeat):
        idle = asyncio.run(idle_cpu(args.rows, args.idle))
        keys = asyncio.run(key_times(args.rows, args.presses))
        runs.append((idle, keys))
        line = f"idle {idle:.2f} % of a core; key p95 ms: " + ", ".join(
            f"{k} {p95(v):.0f} (p50 {statistics.median(v):.0f})" for k, v in keys.items()
        )
        print(line, flush=True)
    idles = [r[0] for r in runs]
    print(f"\n{args.rows} rows, {args.repeat} runs: median of the runs")
    print(f"  idle CPU          {statistics.median(idles):6.2f} %   (goal <= 2)")
    for key in runs[0][1]:
        p95s = [p95(r[1][key]) for r in runs]
        p50s = [statistics.median(r[1][key]) for r in runs]
        print(
            f"  key {key:<11} p50 {statistics.median(p50s):5.0f} ms  "
            f"p95 {statistics.median(p95s):5.0f} ms (runs {min(p95s):.0f}-{max(p95s):.0f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
