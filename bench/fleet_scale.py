"""One fleet refresh against a real Prometheus holding 10, 100 and 500 servers' series.

Two ways to fill Prometheus, measured side by side (--how):
- scraped: fleet_pages.py serves every server's /metrics (SGLang's or vLLM's
  names, half each; 1 % answer 503, so they are down) and its node's dcgm-exporter
  page, each on a loopback port of its own, and Debian's `prometheus` scrapes them all
  every 5 s; the series live in its in-memory head, as a live fleet's recent ones do.
- backfilled (default: no scraping loads the machine further): fleet_backfill.py
  writes the same series into an OpenMetrics file that `promtool tsdb
  create-blocks-from openmetrics` turns into blocks; nothing is scraped, the series
  are read from persisted blocks, and `up` is a plain series (no targets).
A simulator per server does not fit this machine, and what a refresh costs depends on
the series Prometheus holds, not on who wrote them.

Each size: --refreshes refreshes of PrometheusSource, as `sgwatch fleet` runs them,
after one warm-up: wall time (median, p95, max), the CPU time of the client and of
Prometheus's answers (its CPU beyond what it spends without queries, measured for 10 s
before; a loaded machine changes CPU time far less than wall time), bytes
received and requests per refresh. Goal (issue 26): a refresh in 250 ms or less at
500 servers, the same number of requests at every size.

    python bench/fleet_scale.py [--sizes 10,100,500] [--how scraped backfilled]
                                [--refreshes 20] [--gpus 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fleet_backfill import backfill
from bench.fleet_pages import address, engine_of
from sgwatch.config import Fleet
from sgwatch.fleet.prometheus import PrometheusSource
from tests.fleet.rig import Prometheus, prometheus_binary

SCRAPE_S = 5
IDLE_S = 10  # how long Prometheus's own CPU use is measured before the refreshes


def cpu_s(pid: int) -> float:
    """User and system CPU seconds a process has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def refreshes(url: str, count: int, server_pid: int) -> dict:
    src = PrometheusSource.open(
        "bench",
        Fleet(
            prometheus=url,
            match=['job=~"sglang|vllm"'],
            gpu_match=['job="dcgm"'],
            timeout_s=30,  # measured, not cut short
        ),
    )
    try:
        await src.snapshot()  # warm-up: connections, Prometheus's caches
        walls, cpus, sizes, asked = [], [], [], []
        # What Prometheus spends with no query (scraping, in the scraped way) is left out.
        idle = cpu_s(server_pid)
        await asyncio.sleep(IDLE_S)
        idle_rate = (cpu_s(server_pid) - idle) / IDLE_S
        server_cpu, began = cpu_s(server_pid), time.monotonic()
        load = os.getloadavg()[0]
        for _ in range(count):
            before = (src.api.traffic.bytes, src.api.traffic.requests)
            t, cpu = time.perf_counter(), time.process_time()
            snap = await src.snapshot()
            walls.append((time.perf_counter() - t) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
            sizes.append(src.api.traffic.bytes - before[0])
            asked.append(src.api.traffic.requests - before[1])
            assert not snap.stale, snap.problem
        server_cpu = cpu_s(server_pid) - server_cpu - idle_rate * (time.monotonic() - began)
    finally:
        await src.close()
    walls.sort()
    return {
        "rows": len(snap.rows),
        "rows_with_gpu": sum(r.gpu_util_pct is not None for r in snap.rows),
        "down": sum(r.state == "down" for r in snap.rows),
        "median_ms": round(statistics.median(walls), 1),
        "p95_ms": round(walls[max(0, int(len(walls) * 0.95) - 1)], 1),
        "max_ms": round(walls[-1], 1),
        "client_cpu_ms": round(statistics.median(cpus), 1),
        "prometheus_cpu_ms": round(server_cpu * 1000 / count, 1),  # mean, its queries only
        "prometheus_idle_cpu_pct": round(idle_rate * 100, 1),
        "kib": round(statistics.median(sizes) / 1024, 1),
        "requests": sorted(set(asked)),
        "load_avg": round(load, 1),  # this machine's 1-minute load when the run began
    }


def scraped(folder: Path, size: int, gpus: int, binary: str) -> tuple[Prometheus, Callable]:
    """Prometheus scraping fleet_pages.py's servers and nodes every SCRAPE_S seconds,
    once each target has been scraped 3 times; and what stops the pages."""
    pages = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("fleet_pages.py")), str(size), str(gpus)],
        stdout=subprocess.PIPE,
    )
    ports = json.loads(pages.stdout.readline())
    prom = Prometheus.start(folder, binary, scrape_s=SCRAPE_S)
    groups = lambda kind, port_of: [  # noqa: E731
        {"targets": [f"127.0.0.1:{p}"], "labels": {"instance": port_of(i), "job": kind(i)}}
        for i, p in enumerate(ports["servers" if kind is engine_of else "dcgm"])
    ]
    prom.target_groups("servers", groups(engine_of, lambda i: f"{address(i)}:8000"))
    prom.target_groups("dcgm", groups(lambda _i: "dcgm", lambda i: f"{address(i)}:9400"))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        seen = prom.query("count(count_over_time(up[1m]) >= 3)")
        if seen and int(seen[0]["value"][1]) == 2 * size:
            break
        time.sleep(1)
    else:
        raise SystemExit(f"Prometheus did not scrape all {2 * size} targets 3 times in 2 min")
    return prom, pages.kill


def backfilled(folder: Path, size: int, gpus: int, binary: str) -> tuple[Prometheus, Callable]:
    took = backfill(folder, size, gpus)
    print(f"backfilled {size} servers in {took:.1f} s", file=sys.stderr)
    return Prometheus.start(folder, binary), lambda: None  # nothing to scrape


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10,100,500")
    p.add_argument("--how", choices=("scraped", "backfilled"), nargs="+", default=["backfilled"])
    p.add_argument("--refreshes", type=int, default=20)
    p.add_argument("--gpus", type=int, default=8, help="cards per server's node")
    args = p.parse_args()
    binary = prometheus_binary()
    if binary is None:
        print("prometheus is not installed (apt-get install prometheus)", file=sys.stderr)
        return 1
    for how in args.how:
        for size in (int(s) for s in args.sizes.split(",")):
            with tempfile.TemporaryDirectory() as tmp:
                start = scraped if how == "scraped" else backfilled
                prom, stop = start(Path(tmp) / "prom", size, args.gpus, binary)
                try:
                    result = asyncio.run(refreshes(prom.url, args.refreshes, prom.proc.pid))
                finally:
                    prom.stop()
                    stop()
            print(json.dumps({"how": how, "servers": size, **result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
