"""One pod's container followed for a fleet of pods (fleet/pods.py): a PodSession run as
a task, with what watches its warmup against its probes, stopped on demand. A session
that ended keeps its Watch, so that the row can say how its container ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any, Protocol

from sgwatch.fleet.watched import seen
from sgwatch.live.linkstate import Link
from sgwatch.live.pods import PodServer
from sgwatch.live.podsession import PodSession
from sgwatch.live.stopping import stopped
from sgwatch.live.watch import Watch
from sgwatch.transport.kube import KubeError


class Guard(Protocol):
    """What watches a session's warmup against its probes (control/probes.py's
    ProbeGuard): its latest look, with a `warning` when ready is expected too late."""

    report: dict[str, Any] | None

    def close(self) -> None: ...


Guarding = Callable[[PodSession], Guard]


def container_of(s: PodServer) -> tuple[str, int, str | None]:
    """Which container runs now: a restart or a new start is another one to follow."""
    return (s.uid, s.restarts, s.running_since)


class PodTail:
    """One server's container followed by a PodSession run as a task."""

    def __init__(self, session: PodSession, server: PodServer, guard: Guard | None) -> None:
        self.session, self.server, self.guard = session, server, guard
        self.container = container_of(server)
        self.ended_at: float | None = None
        self._task = asyncio.create_task(session.run())
        self._task.add_done_callback(lambda _: setattr(self, "ended_at", time.monotonic()))

    @property
    def watch(self) -> Watch:
        return self.session.watch

    @property
    def ended(self) -> bool:
        return self._task.done()

    @property
    def told(self) -> bool:
        """Whether the row knows what the log says, and a warmup against its probe."""
        state = seen(self.watch).state
        if state != "warming" or self.guard is None or self.session.probe is None:
            return state is not None
        return self.guard.report is not None  # looked at from the next line on

    async def stop(self) -> None:
        try:
            await stopped(self._task)
            with contextlib.suppress(asyncio.CancelledError, KubeError):
                await self._task
        finally:  # also when cancelled meanwhile
            if self.guard is not None:
                self.guard.close()
            await self.session.kube.close()


def tail_failed(tail: PodTail) -> bool:
    """The session ended on kubectl's refusal (its note says why), not on a crash."""
    return tail.ended and tail.watch.link.kind is Link.FAILED
