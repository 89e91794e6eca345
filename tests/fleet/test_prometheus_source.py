"""The Prometheus fleet source against a real Prometheus scraping simulated servers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from sgwatch.config import Fleet
from sgwatch.fleet.prometheus import PrometheusSource
from sgwatch.fleet.source import FleetSnapshot
from tests.fleet.conftest import GPU_MIB, GPUS, NODE
from tests.fleet.rig import Prometheus, start_sim, wait_metrics
from tests.sim.simproc import HOST


def source(url: str, job: str, **kw) -> PrometheusSource:
    fleet = Fleet(
        prometheus=url,
        match=[f'job="{job}"'],
        gpu_match=['job="gpu"'],
        rate_window="5s",
        hosts={HOST: NODE},
        **kw,
    )
    return PrometheusSource.open(job, fleet)


async def until(
    src: PrometheusSource, check: Callable[[FleetSnapshot], bool], timeout: float = 30.0
) -> FleetSnapshot:
    deadline = time.monotonic() + timeout
    while True:
        snap = await src.snapshot()
        if check(snap):
            return snap
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout} s; last: {snap}")
        await asyncio.sleep(0.3)


def by_port(snap: FleetSnapshot) -> dict[int, object]:
    return {int(r.instance.rsplit(":", 1)[1]): r for r in snap.rows}


async def test_rows_of_both_engines(prometheus, servers):
    src = source(prometheus.url, "both")
    busy = {sim.port: engine for engine, sim in servers.busy.items()}

    def ready(snap: FleetSnapshot) -> bool:
        rows = by_port(snap)
        gpus = all(r.gpu_power_w for r in snap.rows)  # the GPUs are asked every 3rd refresh
        return (
            len(rows) == 3
            and gpus
            and all(
                rows[p].state == "serving" and rows[p].gen_tok_s and rows[p].itl_p50_s
                for p in busy
                if p in rows
            )
        )

    try:
        snap = await until(src, ready)
    finally:
        await src.close()
    rows = by_port(snap)
    assert not snap.stale and snap.problem is None
    for port, engine in busy.items():
        row = rows[port]
        assert row.engine == engine and row.job == "both"
        assert row.gen_tok_s > 0 and row.running >= 1
        assert row.model in ("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct")
        assert 0 < row.kv_pct <= 100
        assert row.itl_p50_s is not None and row.itl_p50_s > 0
    idle = rows[servers.idle.port]
    assert (idle.engine, idle.state, idle.gen_tok_s, idle.running) == ("vllm", "idle", 0, 0)
    # The node's GPUs, from the dcgm stand-in, joined by the host the table maps to.
    assert {r.host for r in snap.rows} == {NODE}
    assert all(r.gpu_mem_total_mib == GPUS * GPU_MIB for r in snap.rows)
    assert all(r.gpu_power_w and r.gpu_power_w > 0 for r in snap.rows)


async def test_a_stopped_server_is_down_with_its_cause(prometheus, servers):
    sim = start_sim("sglang", servers.folder, servers.env)
    src = source(prometheus.url, "doomed")
    try:
        wait_metrics(sim)
        prometheus.targets("doomed", [sim.port])
        await until(src, lambda s: [r.state for r in s.rows] == ["idle"])
        sim.close()
        snap = await until(src, lambda s: [r.state for r in s.rows] == ["down"])
        # The cause is kept: the long list of targets is not asked for again at once.
        asked = src.api.traffic.requests
        again = await src.snapshot()
        assert src.api.traffic.requests - asked == src.per_refresh
    finally:
        sim.close()
        await src.close()
    row = snap.rows[0]
    assert row.detail == "connection refused"  # Go's error, less the URL and address
    assert again.rows[0].detail == row.detail
    assert (row.engine, row.model) == ("sglang", "Qwen/Qwen3-8B")  # as last seen
    assert (row.gen_tok_s, row.running, row.kv_pct) == (None, None, None)


async def test_prometheus_gone_leaves_the_last_rows_stale(prometheus_bin, servers, tmp_path):
    own = Prometheus.start(tmp_path / "prom", prometheus_bin)
    own.targets("both", [s.port for s in servers.all])
    src = source(own.url, "both")
    try:
        before = await until(
            src, lambda s: len(s.rows) == 3 and all(r.gen_tok_s is not None for r in s.rows)
        )
        own.stop()
        snap = await src.snapshot()
        assert snap.stale and own.url in snap.problem and "\n" not in snap.problem
        assert [(r.key, r.gen_tok_s, r.model) for r in snap.rows] == [
            (r.key, r.gen_tok_s, r.model) for r in before.rows
        ]
        assert {r.state for r in snap.rows} == {"stale"}
        assert {r.detail for r in snap.rows} <= {"last seen serving", "last seen idle"}
        # After a second failure the next call is answered without asking (backoff).
        await src.snapshot()
        asked = src.api.traffic.requests
        again = await src.snapshot()
        assert again.stale and src.api.traffic.requests == asked
    finally:
        own.stop()
        await src.close()


async def test_queries_per_refresh_do_not_grow_with_the_fleet(prometheus, servers):
    sims = servers.all
    prometheus.targets("pair", [s.port for s in sims[:2]])
    # Six servers as Prometheus sees them: each simulator scraped twice, under two names.
    prometheus.target_groups(
        "six",
        [
            {"targets": [f"{HOST}:{s.port}"], "labels": {"instance": f"copy{n}-{s.port}"}}
            for n in (1, 2)
            for s in sims
        ],
    )
    counts = {}
    for job, n in (("pair", 2), ("six", 6)):
        src = source(prometheus.url, job)
        try:
            await until(src, lambda s, n=n: len(s.rows) == n and not s.stale)
            asked = src.api.traffic.requests
            snap = await src.snapshot()
            counts[job] = src.api.traffic.requests - asked
        finally:
            await src.close()
        assert len(snap.rows) == n
    assert counts["pair"] == counts["six"] == src.per_refresh


async def test_the_slow_figures_are_asked_in_turn_and_kept_between(prometheus, servers):
    """The latency quantiles and the GPUs, one per refresh: eight queries, not ten,
    and every row keeps those figures in the refreshes that do not ask them."""
    src = source(prometheus.url, "both")
    busy = [sim.port for sim in servers.busy.values()]

    def figures(snap: FleetSnapshot) -> bool:
        rows = by_port(snap)
        return len(rows) == 3 and all(
            rows[p].itl_p50_s and rows[p].gpu_mem_total_mib for p in busy if p in rows
        )

    try:
        await until(src, figures)
        counts, snaps = [], []
        for _ in range(3):
            asked = src.api.traffic.requests
            snaps.append(await src.snapshot())
            counts.append(src.api.traffic.requests - asked)
    finally:
        await src.close()
    assert counts == [src.per_refresh] * 3 == [len(src.queries) - 2] * 3
    assert all(figures(snap) for snap in snaps)
