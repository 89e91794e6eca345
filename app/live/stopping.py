"""Stopping a task for sure: cancelled again until it has ended.

One cancel is not always enough on Python 3.11. Its `asyncio.wait_for` returns what
it waited for, and drops the cancel, when the cancel lands in the loop turn in which
that completed (fixed in 3.12). asyncssh waits for a connection with `wait_for`: a
session stopped as its link reconnects could carry on, its streams on the host,
and whoever awaited it after one cancel would wait for ever (a `sgwatch events`
follower that outlived its SIGINT most likely did so). The project's own code waits with
`asyncio.timeout`, which keeps a cancel that comes from outside.
"""

from __future__ import annotations

import asyncio

from sgwatch.transport.local import CANCEL_GRACE_S

# Between cancels of a task still running: past the grace a local command has to
# finish once cancelled, which a second cancel would cut short.
AGAIN_S = CANCEL_GRACE_S + 0.5


async def stopped(*tasks: asyncio.Future, again_s: float = AGAIN_S) -> None:
    """Cancel `tasks` and return once every one has ended; what they ended with stays
    in them for the caller (awaiting one raises it at once; an error nobody reads is
    not logged as never retrieved). A cancel of the caller meanwhile is raised once they
    have ended (it must not go on while they still run): cleanup after a stop that must
    happen anyway belongs in a `finally`."""
    loop, cancelled = asyncio.get_running_loop(), False
    running = {t for t in tasks if not t.done()}
    while running:
        for task in running:
            task.cancel()
        again = loop.time() + again_s
        while running and (left := again - loop.time()) > 0:
            try:
                await asyncio.wait(running, timeout=left)
            except asyncio.CancelledError:
                cancelled = True
            running = {t for t in running if not t.done()}
    for task in tasks:
        if not task.cancelled():
            task.exception()
    if cancelled:
        raise asyncio.CancelledError
