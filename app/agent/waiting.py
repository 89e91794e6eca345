"""`wait`: follow a server until it is ready (or serving), crashed or the timeout passes,
telling the client as it goes with MCP progress notifications: one at each phase, and
one every N steps of a capture (and at its last), each a short line."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from sgwatch.agent.budget import clean
from sgwatch.live.follow import follow
from sgwatch.live.records import Event, to_line
from sgwatch.live.session import Session
from sgwatch.live.stopping import stopped

Notify = Callable[[str], Awaitable[None]]
_ALWAYS = ("phase", "ready", "crash", "timeout", "link", "note")


def worth_telling(event: Event, every: int) -> bool:
    """A phase, an outcome, the link, or every `every`-th step of a capture (and its last)."""
    kind = event["event"]
    if kind in _ALWAYS:
        return kind != "link" or event["state"] != "connecting"
    if kind != "progress":
        return False
    done, total = event["done"], event["total"]
    return done == total or (every > 0 and done % every == 0)


def message(event: Event) -> str:
    """The plain line `sgwatch wait` prints, without its clock and host."""
    line = to_line(event) or event["event"]
    return clean(line.split(" ", 2)[-1].replace("\n", "; "), 160)


async def wait_with_progress(
    session: Session, until: str, timeout: float, every: int, notify: Notify
) -> str:
    """follow()'s outcome; each event worth telling goes to `notify` in order."""
    queue: asyncio.Queue[str] = asyncio.Queue()

    def emit(event: Event) -> None:
        if worth_telling(event, every):
            queue.put_nowait(message(event))

    async def send() -> None:
        while True:
            text = await queue.get()
            await notify(text)
            queue.task_done()

    sender = asyncio.create_task(send())
    try:
        outcome = await follow(session, until, timeout, emit)
        await queue.join()
        return outcome
    finally:
        await stopped(sender)
