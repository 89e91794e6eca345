"""Reconnecting: exponential backoff with jitter while the host is down."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

from sgwatch.transport.link import ANSWERED_WAIT, Backoff, Link
from tests.integration.helpers import arun


def test_backoff_doubles_to_a_cap_with_jitter_below_each_step():
    b = Backoff(first=0.5, factor=2, cap=8, jitter=0.5, rng=random.Random(4))
    delays = [d for d, _ in zip(b.delays(), range(8), strict=False)]
    steps = [0.5, 1, 2, 4, 8, 8, 8, 8]
    assert all(s / 2 <= d <= s for d, s in zip(delays, steps, strict=True))
    assert len(set(delays)) == len(delays)  # jittered: reconnecting clients do not align


def test_link_retries_until_sshd_is_back(host, ssh):
    slept, sleep = _waits_until_sshd_restarts(host, after=3)

    async def body() -> bytes:
        link = Link(ssh, Backoff(first=0.1, jitter=0.5, rng=random.Random(1)), sleep=sleep)
        await _drop(host, link)
        t = await link.connected()
        try:
            return (await t.run("echo back")).stdout
        finally:
            await link.close()

    assert arun(body(), timeout=30) == b"back\n"
    assert len(slept) == 3 and slept[0] < slept[1] < slept[2]


def test_a_host_that_answers_is_retried_within_a_second_however_long_it_takes(host, ssh):
    """sshd down, its host up (connection refused): the waits stop growing at 1 s."""
    slept, sleep = _waits_until_sshd_restarts(host, after=8)

    async def body() -> None:
        link = Link(ssh, Backoff(first=0.5, cap=30, rng=random.Random(2)), sleep=sleep)
        await _drop(host, link)
        await link.connected()
        await link.close()

    arun(body(), timeout=30)
    assert len(slept) == 8 and max(slept) <= ANSWERED_WAIT


def _waits_until_sshd_restarts(
    host, after: int
) -> tuple[list[float], Callable[[float], Awaitable[None]]]:
    """The link's waits (recorded, not slept), and the sleep that records them and starts
    sshd again on the `after`th."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) == after:
            await asyncio.to_thread(host.start)

    return slept, sleep


async def _drop(host, link: Link) -> None:
    """Connect, then stop sshd; the drop reaches the client a moment after sshd dies."""
    await link.connect()
    await asyncio.to_thread(host.stop)
    for _ in range(100):
        if link.transport.closed:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the link did not notice sshd stopping within 2 s")
