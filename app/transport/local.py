"""The same Transport over local processes: `sgwatch localhost` and the demo.

Streams run under the same stdin watchdog as over SSH, in their own session
(start_new_session), so closing one, or sgwatch dying, ends everything it
started and nothing else. `env` is laid over sgwatch's own environment for
every command this transport runs (the demo's stand-in nvidia-smi on PATH), so
another transport in the same process, and sgwatch itself, never see it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping
from typing import Any

from sgwatch.transport.base import RunResult, Stream
from sgwatch.transport.child import Child, spawn_shell
from sgwatch.transport.errors import LinkLost
from sgwatch.transport.guard import guarded, posix

CANCEL_GRACE_S = 2.0


class LocalTransport:
    def __init__(self, label: str = "localhost", env: Mapping[str, str] | None = None) -> None:
        self.label = label
        self._env = dict(env) if env else None
        self._closed = False
        self._streams: set[Child] = set()

    @property
    def closed(self) -> bool:
        return self._closed

    async def connect(self) -> None:
        self._closed = False

    async def run(
        self, cmd: str, input: bytes | None = None, timeout: float | None = 30.0
    ) -> RunResult:
        proc = await self._spawn(
            posix(cmd), stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL
        )
        try:
            async with asyncio.timeout(timeout):
                out, err = await proc.communicate(input)
        except TimeoutError:
            await _reaped(proc, 0)
            raise TimeoutError(f"{self.label}: `{cmd}` still running after {timeout} s") from None
        except asyncio.CancelledError:
            # The caller is gone (the app quits): let a short command finish, end a long one.
            await _reaped(proc, CANCEL_GRACE_S)
            raise
        return RunResult(proc.returncode, out, err)

    async def stream(self, cmd: str) -> Stream:
        proc = await self._spawn(guarded(cmd), stdin=subprocess.PIPE, limit=1 << 20)
        self._streams.add(proc)

        async def finish() -> int | None:
            status = await proc.wait()
            self._streams.discard(proc)
            return status

        async def close() -> None:
            _end(proc)
            await _reaped(proc)
            self._streams.discard(proc)

        return Stream(
            proc.stdout.read, proc.stderr.read, finish, close, lambda: LinkLost(self.label)
        )

    async def _spawn(self, cmd: str, **options: Any) -> Child:
        """`cmd` started in a session of its own. A cancel while asyncio still sets it up
        (the app quitting) lets the set-up end, then ends and reaps the process: else it
        runs on and its pipes' transports are collected after the loop closed."""
        starting = asyncio.ensure_future(
            spawn_shell(
                cmd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env=self._environment(),
                **options,
            )
        )
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            await _settled(starting)
            with contextlib.suppress(OSError):  # it never started: nothing to end
                proc = starting.result()
                _kill_group(proc.pid)
                await _ended(proc)
            raise

    def _environment(self) -> dict[str, str] | None:
        """None: the command inherits sgwatch's environment as it is now."""
        return {**os.environ, **self._env} if self._env else None

    async def forward(self, remote_port: int) -> int:
        return remote_port

    async def close(self) -> None:
        """Like a dropped connection: every stream still open ends."""
        self._closed = True
        for proc in list(self._streams):
            _end(proc)
        for proc in list(self._streams):
            await _reaped(proc)
            self._streams.discard(proc)


async def _settled(step: asyncio.Future[Any]) -> bool:
    """Once `step` is done, however often the waiting task is cancelled meanwhile (a few
    milliseconds here: starting or reaping a process); whether it was."""
    cancelled = False
    while not step.done():
        try:
            await asyncio.wait([step])
        except asyncio.CancelledError:
            cancelled = True
    return cancelled


async def _reaped(proc: Child, grace: float | None = None) -> None:
    """`proc` reaped once it ends, within `grace` seconds (None: no limit) or SIGKILLed
    with its group; what it wrote and nobody read is dropped. A cancel meanwhile (the app
    quitting, a caller cancelled again) ends the grace at once but not the reaping, which
    is done before the cancel goes on: a process not reaped when the loop closes has its
    transport collected after the loop closed (an unraisable "Event loop is closed")."""
    try:
        async with asyncio.timeout(grace):
            await asyncio.shield(proc.exited)
    except TimeoutError:
        _kill_group(proc.pid)
    except asyncio.CancelledError:
        _kill_group(proc.pid)
        await _ended(proc)
        raise
    await _ended(proc)


async def _ended(proc: Child) -> None:
    """Wait for `proc`, ended or killed, to be reaped, its unread output dropped: else a
    pipe paused because its reader is gone holds the wait forever. A cancel meanwhile is
    raised once it is reaped: the caller (the app quitting) must not go on as if not."""
    proc.drop_output()
    if await _settled(asyncio.ensure_future(proc.wait())):
        raise asyncio.CancelledError


def _end(proc: Child) -> None:
    if proc.stdin is not None and not proc.stdin.is_closing():
        proc.stdin.close()  # EOF: the watchdog ends the group


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
