"""One host's connection, made again after a drop; every stream of the host shares it.

A stream that sees its connection die calls `lost()` and then `connected()`,
which retries with exponential backoff and jitter until a new connection is up
(streams wait on one lock, so a drop makes one reconnect, not one per stream).
While the host answers (the link dropped, sshd refused or reset the connection)
no wait exceeds ANSWERED_WAIT: it is up, and a quick retry is what resumes
following soon after a burst of drops. The backoff grows further only for a host
that does not answer at all. A connection that carried data resets the count of
connections that failed young. Errors that retrying cannot fix (host key, login
refused) are raised, not retried.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from sgwatch.transport.base import Stream, Transport
from sgwatch.transport.errors import LinkLost, TransportError

T = TypeVar("T")

STEADY = 5.0  # seconds up before a connection counts as good again (resets the backoff)
ANSWERED_WAIT = 1.0  # the longest wait before retrying a host that answered


@dataclass
class Backoff:
    first: float = 0.5
    factor: float = 2.0
    cap: float = 30.0
    jitter: float = 0.5  # each wait is drawn from [(1 - jitter) * d, d]
    rng: random.Random = field(default_factory=random.Random)

    def delays(self) -> Iterator[float]:
        d = self.first
        while True:
            yield d * (1 - self.jitter * self.rng.random())
            d = min(self.cap, d * self.factor)


@dataclass(frozen=True, slots=True)
class LinkDown:
    """The connection dropped: show the last data as STALE, do not blank it."""

    reason: str


@dataclass(frozen=True, slots=True)
class LinkUp:
    """Connected again; the stream that says so resumed where it stopped."""


class Link:
    def __init__(
        self,
        make: Callable[[], Transport],
        backoff: Backoff | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._make = make
        self._backoff = backoff or Backoff()
        self._sleep = sleep
        self._lock = asyncio.Lock()
        self.transport: Transport | None = None
        self._up_since = 0.0
        self._carried = False  # the current connection delivered data
        self._flaps = 0  # connections lost young without carrying data, in a row
        self.attempts = 0  # connection attempts made, for tests and the status line
        self.last_error: TransportError | None = None

    async def connect(self) -> Transport:
        """One attempt, for start-up: the caller reports the error and stops."""
        async with self._lock:
            return await self._attempt()

    async def connected(self) -> Transport:
        """The live transport, reconnecting with backoff as long as that can help."""
        async with self._lock:
            t = self.transport
            if t is not None and not t.closed:
                return t
            delays = self._backoff.delays()
            if self._flaps:  # a server that accepts and then drops us: wait as after failures
                wait = list(itertools.islice(delays, self._flaps))[-1]
                await self._sleep(min(wait, ANSWERED_WAIT))  # it answered, it is up
            while True:
                try:
                    return await self._attempt()
                except TransportError as e:
                    if not e.retry:
                        raise
                    wait = next(delays)
                    await self._sleep(min(wait, ANSWERED_WAIT) if e.answered else wait)

    async def follow(
        self, command: Callable[[], str], decode: Callable[[Stream], AsyncIterator[T]]
    ) -> AsyncIterator[T | LinkDown | LinkUp]:
        """Run `command()` as a stream and yield what `decode` makes of it; when the
        connection drops, yield LinkDown, reconnect, yield LinkUp and run `command()`
        again (it resumes where the last one stopped). Ends when `decode` ends, that
        is when the command ended by itself."""
        down = False
        while True:
            try:
                transport = await self.connected()
                stream = await transport.stream(command())
            except TransportError as e:
                if not e.retry:
                    raise
                if self.transport is not None:
                    await self.lost(self.transport)
                if not down:
                    down = True
                    yield LinkDown(str(e))
                continue
            if down:
                down = False
                yield LinkUp()
            try:
                async for item in decode(stream):
                    if self.transport is transport:
                        self._carried = True
                    yield item
                return
            except LinkLost as e:
                await self.lost(transport)
                down = True
                yield LinkDown(str(e))
            finally:
                await stream.close()

    async def lost(self, transport: Transport) -> None:
        """A stream saw `transport` die; the next `connected()` makes a new one."""
        if self.transport is transport:
            self.transport = None
            young = time.monotonic() - self._up_since < STEADY
            self._flaps = self._flaps + 1 if young and not self._carried else 0
            await transport.close()

    async def close(self) -> None:
        if self.transport is not None:
            await self.transport.close()
            self.transport = None

    async def _attempt(self) -> Transport:
        self.attempts += 1
        t = self._make()
        try:
            await t.connect()
        except TransportError as e:
            self.last_error = e
            raise
        self.transport = t
        self._up_since = time.monotonic()
        self._carried = False
        return t
