"""A look at one host for a tool call: a session run until it has read what the server's
log already holds (and a first GPU sample, which names the GPUs for the roofline), then
stopped. Each call looks afresh: the answer is the host as it is now, not as it was
when an earlier call left it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from mcp.server.mcpserver.exceptions import ToolError

from sgwatch.control.controller import Controller
from sgwatch.live.linkstate import Link
from sgwatch.live.session import Session
from sgwatch.live.stopping import stopped
from sgwatch.live.transition import Transition
from sgwatch.transport.errors import TransportError

LOOK_S = 30.0  # connect, discover and read the log's past
GPU_S = 3.0  # then a first GPU sample, at most this long
_GAVE_UP = (Link.FAILED, Link.ENDED)


class Reader(Controller):
    """A controller that reads (the catalog, the ETA from the history, the server's API)
    and records nothing: a Watch tells a new subscriber the run's outcome so far, which
    a Controller would write into the history as a run, once per look."""

    def _on_transition(self, t: Transition) -> None:
        return None


@contextlib.asynccontextmanager
async def looking(session: Session) -> AsyncIterator[Session]:
    """`session`, running and caught up with its log; stopped on the way out. Raises
    ToolError, in one line, when the host or its server cannot be followed."""
    watch = session.watch
    changed = asyncio.Event()
    unlisten = watch.listen(changed.set)
    unsubscribe = watch.subscribe(lambda _: changed.set())
    task = asyncio.create_task(session.run())
    task.add_done_callback(lambda _: changed.set())
    try:
        await _until(changed, lambda: watch.caught_up or task.done() or _gave_up(session), LOOK_S)
        if not watch.caught_up:
            raise ToolError(_why(session, task))
        await _until(changed, lambda: bool(watch.gpu.gpus) or bool(watch.gpu_note), GPU_S)
        yield session
    finally:
        unsubscribe()
        unlisten()
        try:
            await stopped(task)
            with contextlib.suppress(asyncio.CancelledError, TransportError):
                await task
        finally:  # also when cancelled again meanwhile
            with contextlib.suppress(TransportError):
                await session.link.close()


async def _until(changed: asyncio.Event, done, seconds: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not done() and (left := deadline - loop.time()) > 0:
        changed.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(left):
                await changed.wait()


def _gave_up(session: Session) -> bool:
    return session.watch.link.kind in _GAVE_UP or session.unfollowed is not None


def _why(session: Session, task: asyncio.Task) -> str:
    """One line: why the host's server could not be read."""
    host, watch = session.watch.label, session.watch
    if task.done() and not task.cancelled() and (error := task.exception()) is not None:
        return f"{host}: {error}".splitlines()[0]
    if watch.note:
        return f"{host}: {watch.note}".splitlines()[0]
    return f"{host}: the server's log was not read within {LOOK_S:g} s ({watch.link})"
