"""A refresh is bounded in time and never overlaps another."""

from __future__ import annotations

import asyncio

from sgwatch.config import Fleet
from sgwatch.fleet.prometheus import PrometheusSource


async def test_a_slow_api_is_stale_within_the_timeout(fake):
    fake.delay_s = 3.0
    src = PrometheusSource.open("slow", Fleet(prometheus=fake.url, timeout_s=0.5))
    try:
        loop = asyncio.get_running_loop()
        began = loop.time()
        snap = await src.snapshot()
        took = loop.time() - began
    finally:
        await src.close()
    assert snap.stale and snap.problem == f"{fake.url}: no answer within 0.5 s"
    assert took < 2.0


async def test_refreshes_asked_at_once_run_one_after_the_other(fake):
    fake.delay_s = 0.2
    src = PrometheusSource.open("busy", Fleet(prometheus=fake.url))
    try:
        snaps = await asyncio.gather(*(src.snapshot() for _ in range(3)))
    finally:
        await src.close()
    assert all(not s.stale for s in snaps)
    # Each refresh's queries go at once; a second refresh's only after the first's end.
    # The first asks every query, the later ones those asked in turn one at a time.
    assert len(fake.headers) == len(src.queries) + 2 * src.per_refresh
    assert fake.most_in_flight == len(src.queries)
