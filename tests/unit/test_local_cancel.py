"""A local command cancelled while asyncio is still starting it leaves nothing behind.

The app quitting cancels whatever runs; a cancel that lands inside
create_subprocess_shell used to leave the process running and its pipes' transports
to be collected after the loop closed (a ResourceWarning, or pytest's
PytestUnraisableExceptionWarning when it happens inside a test).
"""

from __future__ import annotations

import asyncio
import gc
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
