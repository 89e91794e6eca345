"""Whether the followed server still runs, and which server comes after it.

A server that dies without a word in its log (SIGKILL, the OOM killer) would
show a warmup that is not happening: its /proc entry is looked at every
`check_every` seconds, one short command each time. A server that now writes
the log the gone one wrote is a restart made elsewhere, not a crash. Once the
followed run is over, with `keep_looking`, a new server started on the host is
followed instead (`Started`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from sgwatch.core import events as ev
from sgwatch.live.choice import output_of, readable
from sgwatch.remote.discover import DiscoveryFailed, ServerProcess
from sgwatch.transport.base import Transport
from sgwatch.transport.errors import TransportError

if TYPE_CHECKING:
    from sgwatch.live.session import Session

_OVER = (ev.CRASHED, ev.STOPPED)


class Started(Exception):
    """A new server started once the followed run was over."""

    def __init__(self, server: ServerProcess) -> None:
        super().__init__(server.pid)
        self.server = server


async def check_server(session: Session, path: str) -> None:
    """Look at the followed server until the session ends; raises Started for a new
    server, once the run followed on `path` is over, that writes another log."""
    while True:
        await asyncio.sleep(session.options.check_every)
        server = session.server
        if session.restarting:
            continue
        if server is None or session.watch.state.state in _OVER:
            if session.looks_for_new_servers and (new := await _new(session, path)) is not None:
                raise Started(new)
            continue
        try:
            transport = await session.link.connected()
            r = await transport.run(f"exec cat /proc/{server.pid}/stat", timeout=10)
        except (TransportError, TimeoutError):
            continue  # the link's own handling says what is wrong
        if session.restarting or session.server is not server:
            continue  # restarted meanwhile: the answer is about the old process
        if not _same_process(r.stdout, server.start_time):
            if (successor := await _successor(session, transport, server)) is not None:
                # restarted by another sgwatch or by hand
                session.now_followed(successor, f"restarted elsewhere: now pid {successor.pid}")
                continue
            session.watch.server_gone(server.pid)


async def _new(session: Session, path: str) -> ServerProcess | None:
    """The newest server started since the followed run, if it writes another log
    than `path`; one that writes `path` is simply the followed server from now on
    (the follower reads its run already)."""
    old = session.server.pid if session.server is not None else None
    others = await _others(session, None, old)
    new = max((s for s in others if readable(s)), key=lambda s: s.start_time, default=None)
    if new is None or output_of(new) != path:
        return new
    session.now_followed(new, f"a new server writes {path}: pid {new.pid}")
    return None


async def _successor(
    session: Session, transport: Transport, gone: ServerProcess
) -> ServerProcess | None:
    """A server that now writes the log the gone one wrote: a restart made elsewhere,
    whose new run the log follower is reading (not a crash of the old process)."""
    if gone.log is None:
        return None
    others = await _others(session, transport, gone.pid)
    return next((s for s in others if s.log == gone.log), None)


async def _others(
    session: Session, transport: Transport | None, pid: int | None
) -> list[ServerProcess]:
    """The servers discovery finds now (on `transport`, else the link's) besides `pid`;
    none when it fails: the link's own handling says what is wrong."""
    try:
        found = await session.discover(transport or await session.link.connected())
    except (TransportError, DiscoveryFailed, TimeoutError):
        return []
    return [s for s in found.servers if s.pid != pid]


def _same_process(stat: bytes, start_time: int) -> bool:
    """Whether /proc/PID/stat still describes the process that started at `start_time`
    (not a zombie, not a recycled pid; 0: start time unknown, the pid alone decides)."""
    try:
        fields = stat.rsplit(b")", 1)[1].split()
        return fields[0] != b"Z" and (not start_time or int(fields[19]) == start_time)
    except (IndexError, ValueError):
        return False
