"""One host followed over SSH for a fleet: a Session run as a task, stopped on demand.

The fleet's SSH parts (the group source, the follower of down targets) each hold
some of these. A tail whose session ended (the host unreachable, no server there)
keeps its Watch, so that the row can say why, until it is started again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable
from functools import partial

from sgwatch.config import Config
from sgwatch.engines.port import server_port
from sgwatch.fleet.watched import seen
from sgwatch.live import linkstate
from sgwatch.live.options import Options
from sgwatch.live.session import Session
from sgwatch.live.stopping import stopped
from sgwatch.live.watch import Watch
from sgwatch.remote.discover import ServerProcess
from sgwatch.transport.errors import TransportError
from sgwatch.transport.factory import transport_for

# How a tail is started: a session over `host`, choosing among several servers
# the one that listens on `port` (None: the newest).
Starter = Callable[[str, int | None], Session]


class Tail:
    def __init__(
        self,
        session: Session,
        clock: Callable[[], float] = time.monotonic,
        port: int | None = None,
    ) -> None:
        self.session = session
        self.port = port  # the server's port, when the row names one
        self._clock = clock
        self.ended_at: float | None = None  # when the session ended by itself
        self._task = asyncio.create_task(session.run())
        self._task.add_done_callback(self._ended)

    @property
    def watch(self) -> Watch:
        return self.session.watch

    @property
    def ended(self) -> bool:
        return self._task.done()

    def elsewhere(self) -> str | None:
        """Why the server followed is not the row's: the session took the host's only
        server (the chooser is asked only among several) and it listens on another port."""
        server = self.session.server
        if self.port is None or server is None or (port := server_port(server.argv)) == self.port:
            return None
        return f"no server on port {self.port} (pid {server.pid} listens on {port})"

    def _ended(self, task: asyncio.Task) -> None:
        self.ended_at = self._clock()
        if not task.cancelled() and isinstance(task.exception(), TransportError):
            # a reconnect refused for good (a changed host key): the row says why
            self.watch.link, self.watch.note = linkstate.FAILED, str(task.exception())

    async def stop(self) -> None:
        try:
            await stopped(self._task)
            with contextlib.suppress(asyncio.CancelledError, TransportError):
                await self._task
        finally:  # also when cancelled meanwhile
            await self.session.link.close()


async def settle(tails: Iterable[Tail], timeout: float) -> None:
    """Wait (up to `timeout` s) until every tail still running knows something."""
    tails = list(tails)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline and any(
        not t.ended and seen(t.watch).state is None for t in tails
    ):
        await asyncio.sleep(0.05)


def ssh_starter(
    config: Config,
    accept_new_host_key: bool,
    log_places: tuple[str, ...],
    keep_looking: bool = False,
) -> Starter:
    """How a fleet follows a host: as `sgwatch events HOST` would, with the host's
    profile, picking the server on the row's port; `keep_looking`: once a run is over,
    follow the next server there (a group's host row) rather than stay on it."""
    options = Options(keep_looking=keep_looking, log_places=log_places)

    def start(host: str, port: int | None) -> Session:
        make = partial(transport_for, host, accept_new_host_key=accept_new_host_key)
        return Session(
            Watch(host), make, profile=config.host(host), choose=on_port(port), options=options
        )

    return start


def on_port(port: int | None) -> Callable[[list[ServerProcess]], Awaitable[ServerProcess | None]]:
    """A session's chooser among several servers: the one whose command line listens on
    `port` (the scraped instance's), else None (the session takes the newest)."""

    async def choose(servers: list[ServerProcess]) -> ServerProcess | None:
        return next((s for s in servers if port is not None and server_port(s.argv) == port), None)

    return choose
