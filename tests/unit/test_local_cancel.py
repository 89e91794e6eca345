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

import pytest

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
