"""Keys while a long log's past is read: the dashboard over SSH on a 1 GB log.

The dashboard follows the log through the test sshd on loopback (`--log`): its tail
shows first, then the past is parsed on the same event loop. Key press to screen
(`l`, the layout toggle, measured as bench/ui_flood.py measures it) while the past
is being read, against the same key once it is read (the baseline, same run).
Goal (issue 14): p95 <= 100 ms while reading. Median and spread over --repeat runs.

    python bench/rebuild_keys.py [--mb 1000] [--repeat 3]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import long_log, long_log_options, session_on, sshd
from ui_flood import SIZE, key_latencies, p95

from sgwatch.live.watch import Watch
from sgwatch.ui.app import SgwatchApp
from tests.integration.sshd import SshdServer


async def one_run(srv: SshdServer, log: Path) -> tuple[list[float], list[float], int]:
    watch = Watch("ct129")
    session = session_on(srv, watch, log)
    app = SgwatchApp([watch], [lambda _w: session.run()], bell=False)
    reading: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        while watch.history is None:
            await pilot.pause(0.02)
        while watch.history is not None:
            reading += await key_latencies(app, 1)
        idle = await key_latencies(app, max(10, len(reading)))
        await session.link.close()
    return reading, idle, len(reading)


def main() -> None:
    args = long_log_options(__doc__)
    with sshd() as (srv, tmp):
        log = long_log(tmp / "server.log", args.mb)
        runs = [asyncio.run(one_run(srv, log)) for _ in range(args.repeat)]
    reading95 = [p95(r) for r, _, _ in runs]
    idle95 = [p95(i) for _, i, _ in runs]
    print(
        f"log: {args.mb} MB; {args.repeat} runs; presses while reading: "
        f"{', '.join(str(n) for _, _, n in runs)}\n"
    )
    print("| key -> screen | p95 median (min-max) |\n|---|---:|")
    print(
        f"| once the past is read (baseline) | {statistics.median(idle95):.0f} ms "
        f"({min(idle95):.0f}-{max(idle95):.0f}) |"
    )
    print(
        f"| while the past is read | {statistics.median(reading95):.0f} ms "
        f"({min(reading95):.0f}-{max(reading95):.0f}) |"
    )


if __name__ == "__main__":
    main()
