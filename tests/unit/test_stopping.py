"""A cancel that lands in the loop turn in which what a task waits for completes: Python
3.11's `asyncio.wait_for` returns and drops it (asyncssh's connect waits that way). A
follower stopped then (Ctrl-C, the bench's SIGINT) must still end, and whatever it
started with it."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from sgwatch.live import follow
from sgwatch.live.stopping import stopped
from sgwatch.live.watch import Watch

DROPS_CANCELS = sys.version_info < (3, 12)


async def test_following_with_a_timeout_ends_on_a_cancel_that_lands_as_a_line_comes():
    """`wait --timeout` at Ctrl-C while the log is busy: the line and the cancel in one turn."""
    watch = Watch("ct129")
    following = asyncio.Event()

    async def run() -> None:  # a session that follows for as long as it is let
        following.set()
        await asyncio.sleep(3600)

    session = SimpleNamespace(watch=watch, run=run)
    task = asyncio.create_task(follow.follow(session, "ready", 600, lambda _: None))
    await following.wait()
    await asyncio.sleep(0.01)  # follow() waits for the next change
    loop = asyncio.get_running_loop()

    def line_then_cancel() -> None:
        watch.feed(b"a line\n")  # wakes follow()'s wait; it completes next turn
        loop.call_soon(task.cancel)  # in that same turn

    loop.call_soon(line_then_cancel)
    await asyncio.wait({task}, timeout=5)
    try:
        assert task.cancelled(), "following went on after its cancel"
    finally:
        task.cancel()  # a second cancel, for the failing case


async def test_a_task_that_dropped_its_cancel_is_cancelled_again_until_it_ends():
    loop = asyncio.get_running_loop()
    connected, went_on = loop.create_future(), asyncio.Event()

    async def reconnecting() -> None:
        await asyncio.wait_for(connected, 10)  # as asyncssh waits for a connection
        went_on.set()
        await asyncio.sleep(3600)  # following on, over the new connection

    task = asyncio.create_task(reconnecting())
    await asyncio.sleep(0)  # in wait_for now
    connected.set_result("connection")
    task.cancel()  # lands in the turn the connection came in
    await asyncio.sleep(0.05)
    assert went_on.is_set() is DROPS_CANCELS  # the first cancel dropped (on 3.11)
    async with asyncio.timeout(5):
        await stopped(task, again_s=0.05)
    assert task.cancelled()


async def test_a_cancel_of_the_one_stopping_comes_out_once_the_task_has_ended():
    """Its caller cancelled meanwhile (the app quitting), stopping still waits for the
    task, whose own cleanup (closing a stream) takes a while."""
    cleaned = asyncio.Event()

    async def closing_slowly() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            await asyncio.shield(asyncio.sleep(0.2))
            cleaned.set()

    task = asyncio.create_task(closing_slowly())
    await asyncio.sleep(0)
    stopping = asyncio.create_task(stopped(task))
    await asyncio.sleep(0.05)
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    assert cleaned.is_set() and task.cancelled()


async def test_an_error_a_task_ended_with_stays_for_whoever_awaits_it():
    async def failing() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            raise OSError("the stream broke as it closed")

    task = asyncio.create_task(failing())
    await asyncio.sleep(0)
    await stopped(task)
    with pytest.raises(OSError, match="broke as it closed"):
        await task


def test_the_projects_code_waits_with_asyncio_timeout_not_wait_for():
    app = Path(__file__).resolve().parents[2] / "app"
    users = [p.name for p in app.rglob("*.py") if re.search(r"\bwait_for\(", p.read_text())]
    assert users == [], "asyncio.wait_for drops a cancel on Python 3.11: use asyncio.timeout"
