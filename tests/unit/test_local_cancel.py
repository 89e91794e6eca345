"""A local command cancelled while asyncio is still starting it leaves nothing behind.

The app quitting cancels whatever runs; a cancel that lands inside
create_subprocess_shell used to leave the process running and its pipes' transports
to be collected after the loop closed (a ResourceWarning, or pytest's
PytestUnraisableExceptionWarning when it happens inside a test).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sys
import time
import warnings
from pathlib import Path
from subprocess import PIPE

import pytest

from sgwatch.transport import local
from sgwatch.transport.child import spawn_shell
from sgwatch.transport.local import LocalTransport


async def _cancelled(steps: int, cancels: int, streamed: bool) -> None:
    """Cancel after `steps` turns of the loop (a negative number: after that many tenths of
    a second, the command running), `cancels` times."""
    t = LocalTransport()
    task = asyncio.create_task(t.stream("sleep 30") if streamed else t.run("sleep 30"))
    for _ in range(cancels):
        if steps < 0:
            await asyncio.sleep(-steps / 10)
        for _ in range(max(steps, 0)):
            await asyncio.sleep(0)
        task.cancel()
    try:
        stream = await task
    except asyncio.CancelledError:
        pass
    else:  # started before the cancel came: closed as any caller would
        await stream.close()
    await t.close()


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "stream"])
def test_a_cancel_at_any_step_of_starting_leaves_no_process_or_pipe(streamed):
    for steps in (*range(6), -1, -3):
        for cancels in (1, 2):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ResourceWarning)
                asyncio.run(_cancelled(steps, cancels, streamed))
                gc.collect()
            left = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
            assert left == [], f"cancelled after {steps} steps, {cancels}x: {left}"


async def _written(pidfile) -> None:
    while not (pidfile.exists() and pidfile.read_text().strip()):
        await asyncio.sleep(0.01)


async def _closing_cancelled(what: str, pidfile) -> None:
    """A command ended by `what`, whose wait for the process is cancelled in its turn."""
    t = LocalTransport()
    cmd = f"echo $$ > {pidfile}; sleep 0.6"
    if what == "run":  # cancelled, then cancelled again inside its grace
        task = asyncio.create_task(t.run(cmd))
        await _written(pidfile)
        task.cancel()
        await asyncio.sleep(0.1)
    else:  # the stream's close, or the transport's (the app leaving), cancelled
        stream = await t.stream(cmd)
        await _written(pidfile)
        task = asyncio.create_task(stream.close() if what == "stream" else t.close())
        await asyncio.sleep(0)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


@pytest.mark.parametrize("what", ["run", "stream", "transport"])
def test_a_cancel_while_a_command_is_being_ended_still_reaps_it(what, tmp_path):
    pidfile = tmp_path / "pid"
    unraisable: list[str] = []
    hook, sys.unraisablehook = sys.unraisablehook, lambda u: unraisable.append(repr(u.exc_value))
    try:
        asyncio.run(_closing_cancelled(what, pidfile))
        pid = int(pidfile.read_text())
        try:
            os.kill(pid, 0)
            left = True
        except ProcessLookupError:
            left = False
        time.sleep(0.8)  # the command would have ended by itself: its transport is collected
        gc.collect()
    finally:
        sys.unraisablehook = hook
    assert (left, unraisable) == (False, [])  # before: running, then "Event loop is closed"


async def _reaping_cancelled(turns: int) -> tuple[bool, bool, int | None]:
    """A command that has exited, reaped by a task cancelled after `turns` turns of the
    loop: whether the cancel found the task still running, whether the task ended
    cancelled, and the command's status by then."""
    proc = await spawn_shell("exit 0", stdout=PIPE, stderr=PIPE)
    await proc.exited
    task = asyncio.create_task(local._reaped(proc))
    for _ in range(turns):
        await asyncio.sleep(0)
    came_in_time = task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return came_in_time, task.cancelled(), proc.returncode


def test_a_cancel_while_an_ended_command_is_reaped_is_raised_once_it_is():
    # Before: a cancel in the last milliseconds of the reaping was swallowed, and the
    # caller (the app quitting) went on as if not cancelled.
    seen = [asyncio.run(_reaping_cancelled(turns)) for turns in range(8)]
    assert [(took, took, 0) for took, _, _ in seen] == seen
    assert seen[0][0] and not seen[-1][0]  # the turns span the whole reaping


WRITES = 5_000_000  # more than a stream's reader holds before it pauses (2 x 1 MiB)
PAUSED_AT = 2 * (1 << 20) + (1 << 16)  # written past this and blocked: the reader paused
WRITER = f"""
import sys, time
for _ in range({WRITES} // 65536 + 1):
    sys.stdout.buffer.write(b"x" * 65536)  # a write at a time: /proc counts each once done
    sys.stdout.buffer.flush()
time.sleep(30)
"""


async def _written_or_stuck(pidfile) -> None:
    """Until the writer has written it all (a reader that reads) or is blocked writing
    past what a paused reader holds (one that stopped reading)."""
    while True:
        if pidfile.exists() and (pid := pidfile.read_text().strip()):
            proc = Path("/proc") / pid
            io = dict(line.split(": ") for line in (proc / "io").read_text().splitlines())
            wchan = (proc / "wchan").read_text()
            written = int(io["wchar"])
            if written >= WRITES or ("pipe" in wchan and written >= PAUSED_AT):
                return
        await asyncio.sleep(0.02)


async def _unread_then_closed(what: str, folder) -> float:
    """A command that writes more than its reader holds (5 MB: reading pauses), then stays;
    its output never read, ended by `what` as the app ends a stream it stopped reading.
    How long the ending took."""
    t = LocalTransport()
    (folder / "writer.py").write_text(WRITER)
    pidfile = folder / "pid"
    cmd = f"sh -c 'echo $$ > {pidfile}; exec {sys.executable} {folder / 'writer.py'}'"
    if what == "run":
        task = asyncio.create_task(t.run(cmd))
        await _written_or_stuck(pidfile)
        began = time.monotonic()
        task.cancel()  # its grace, then the kill
        with contextlib.suppress(asyncio.CancelledError):
            await task
    else:
        stream = await t.stream(cmd)
        await _written_or_stuck(pidfile)
        began = time.monotonic()
        await asyncio.wait_for(stream.close() if what == "stream" else t.close(), 10)
    return time.monotonic() - began


@pytest.mark.parametrize("what", ["run", "stream", "transport"])
def test_a_command_whose_output_is_not_read_is_ended_at_once(what, tmp_path):
    unraisable: list[str] = []
    hook, sys.unraisablehook = sys.unraisablehook, lambda u: unraisable.append(repr(u.exc_value))
    try:
        took = asyncio.run(_unread_then_closed(what, tmp_path))
        gc.collect()
    finally:
        sys.unraisablehook = hook
    # Before: the wait for the process never returned (a paused pipe never saw its end).
    grace = 2.0 if what == "run" else 0.0
    assert took < grace + 1.0, f"ended after {took:.1f} s"
    assert unraisable == []
