"""The session a command without a screen runs on one host (`wait`, `events`, `restart`,
the MCP server's tools), built as the dashboard builds one: the host's profile from the
config, a named log over discovery, the history's logs when no server runs now."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from functools import partial

from sgwatch.config import Config
from sgwatch.control.history import History
from sgwatch.live.options import Options
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.remote.discover import PLACES
from sgwatch.transport.base import Transport
from sgwatch.transport.errors import TransportError
from sgwatch.transport.factory import transport_for

# Without a timeout, a named log that does not exist yet gets this long to appear: long
# enough for a server being launched beside us, short enough to catch a typo.
MISSING_LOG_GRACE = 10.0
# Where on the host to look for the logs of servers that are gone, as folders separated
# by ':', instead of the home folder, /tmp and /var/tmp (the shells' folders still are).
PLACES_ENV = "SGWATCH_LOG_PLACES"
# A one-off action (restart, launch) retries a host that takes connections and drops
# them during the SSH handshake this long, then calls it unreachable.
FIRST_CONNECTION_S = 30.0


def headless_session(
    host: str,
    config: Config,
    *,
    log: str | None = None,
    pid: int | None = None,
    accept_new_host_key: bool = False,
    timeout: float | None = None,
    since_now: bool = False,
) -> Session:
    """A missing `log` is waited for up to `timeout` when one is given, else
    MISSING_LOG_GRACE; `since_now`: only a run from now on counts (wait --since)."""
    make = partial(transport_for, host, accept_new_host_key=accept_new_host_key)
    return Session(
        Watch(host),
        make,
        log=log,
        profile=config.host(host),
        pid=pid,
        missing_log_grace=MISSING_LOG_GRACE if timeout is None else None,
        # the history's logs: its last run, when none runs now
        options=Options(
            since_now=since_now,
            past_logs=tuple(History.kept(host).logs()),
            log_places=log_places(os.environ),
        ),
    )


def log_places(env: Mapping[str, str]) -> tuple[str, ...]:
    """Where the logs of servers that are gone are looked for: SGWATCH_LOG_PLACES's
    folders, else the usual places."""
    given = tuple(p for p in env.get(PLACES_ENV, "").split(":") if p)
    return given or PLACES


async def first_connection(session: Session) -> Transport:
    """The session's first connection, a drop in its handshake retried for a while."""
    try:
        async with asyncio.timeout(FIRST_CONNECTION_S):
            return await session.first_connection()
    except TimeoutError:
        raise TransportError(
            f"{session.watch.label}: every connection was dropped during its SSH handshake "
            f"for {FIRST_CONNECTION_S:g} s"
        ) from None
