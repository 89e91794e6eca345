"""The Transport protocol: what the session needs from a host, over SSH or locally.

- `run(cmd, input=)`: a short command, its exit status and output (bytes).
- `stream(cmd)`: a long-running command's stdout as bytes, chunk by chunk, as it
  arrives (never line-buffered: tqdm frames end in `\\r`, not `\\n`). Every stream
  runs under the stdin watchdog (guard.py), so it dies with its channel.
- `forward(port)`: a local port that reaches `port` on the host's loopback.

Commands are POSIX sh text. Output is bytes end to end: decoding belongs to the
line splitter, and a strict decoder in the SSH layer would close the whole
connection on one invalid UTF-8 byte (docs/design/ssh.md, bytes not text).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

CHUNK = 1 << 20
STDERR_KEPT = 4096  # bytes of a stream's stderr kept for its error message


@dataclass(frozen=True, slots=True)
class RunResult:
    exit_status: int | None
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.exit_status == 0


class Stream:
    """A running command's stdout. `read()` returns b"" once the command ended
    (`exit_status` then says how) and raises LinkLost if the connection died."""

    def __init__(
        self,
        read: Callable[[int], Awaitable[bytes]],
        read_stderr: Callable[[int], Awaitable[bytes]],
        finish: Callable[[], Awaitable[int | None]],
        close: Callable[[], Awaitable[None]],
        lost: Callable[[], Exception],
    ) -> None:
        self._read, self._finish, self._close, self._lost = read, finish, close, lost
        self._stderr = bytearray()
        self._drain = asyncio.ensure_future(_drain_stderr(read_stderr, self._stderr))
        self.received = 0  # stdout bytes delivered so far
        self.exit_status: int | None = None
        self.ended = False

    async def read(self) -> bytes:
        if self.ended:
            return b""
        data = await self._read(CHUNK)
        if data:
            self.received += len(data)
            return data
        self.ended = True
        self.exit_status = await self._finish()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0):
                await asyncio.shield(self._drain)
        if self.exit_status is None:
            raise self._lost()
        return b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while data := await self.read():
            yield data

    @property
    def stderr(self) -> str:
        """The end of what the command wrote to stderr, for messages."""
        return self._stderr.decode("utf-8", "replace").strip()

    async def close(self) -> None:
        """Close the channel; the watchdog on the far side ends the command."""
        self._drain.cancel()
        await self._close()


async def _drain_stderr(read: Callable[[int], Awaitable[bytes]], into: bytearray) -> None:
    """Read stderr even when nobody looks: unread, it would fill the channel window that
    stdout shares and stall the stream. Not a method: a cancelled task keeps its
    CancelledError, whose frame would then hold the stream that holds the task."""
    with contextlib.suppress(Exception):
        while data := await read(CHUNK):
            into += data
            del into[:-STDERR_KEPT]


class Transport(Protocol):
    label: str  # the host as the user named it

    @property
    def closed(self) -> bool: ...

    async def connect(self) -> None: ...

    async def run(
        self, cmd: str, input: bytes | None = None, timeout: float | None = 30.0
    ) -> RunResult: ...

    async def stream(self, cmd: str) -> Stream: ...

    async def forward(self, remote_port: int) -> int: ...

    async def close(self) -> None: ...
