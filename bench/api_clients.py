"""What opening a server's API costs the dashboard: it opens one at every restart, link
drop and failed scrape (control/metrics_poll.py), and once a run for /server_info.

Baseline: an httpx client as httpx makes it by default, which builds a TLS context of
its own and loads the CA bundle, though the forward carries plain HTTP. Measured: the
client `api_at` opens (control/server_http.py), sharing one context. Per client: the
bytes it adds to the C library's heap while open, and the milliseconds to open and
close it (median and min-max over the repeats).

    python bench/api_clients.py [--clients N] [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from heapstats import allocator

from sgwatch.control.server_http import api_at


@contextlib.asynccontextmanager
async def default_client(local: int, label: str):
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{local}", trust_env=False) as c:
        yield c


async def one(opener, clients: int) -> tuple[float, float]:
    """KiB of the C heap per open client, and ms to open and close one."""
    async with contextlib.AsyncExitStack() as stack:
        before = allocator()["heap_used"]
        t0 = time.perf_counter()
        for port in range(1, clients + 1):
            await stack.enter_async_context(opener(port, f"ct129:{port}"))
        held = allocator()["heap_used"] - before
    return held / clients, (time.perf_counter() - t0) * 1000 / clients


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    asyncio.run(one(api_at, 1))  # imports and the shared context, once
    out = {}
    for name, opener in (("httpx default", default_client), ("api_at", api_at)):
        runs = [asyncio.run(one(opener, args.clients)) for _ in range(args.repeat)]
        for i, what in enumerate(("heap_kib_per_client", "ms_per_client")):
            values = [r[i] for r in runs]
            out.setdefault(name, {})[what] = {
                "median": round(statistics.median(values), 1),
                "range": [round(min(values), 1), round(max(values), 1)],
            }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
