"""A host's streams into its Watch: the followed log's events, and the GPU samples.

The session (session.py) opens them; here each event becomes what the Watch
shows: the link's state, a note, the log's bytes (through its Backlog).
"""

from __future__ import annotations

import asyncio
import contextlib

from sgwatch.live import linkstate
from sgwatch.live.backlog import Backlog
from sgwatch.live.watch import Watch
from sgwatch.remote.gpustream import GpuData, GpuStream, GpuUnavailable
from sgwatch.remote.logfollow import (
    LogData,
    LogDetached,
    LogFailed,
    LogFollower,
    LogHole,
    LogMissing,
    LogNote,
    LogOpened,
    LogTail,
)
from sgwatch.transport.link import Link, LinkDown, LinkUp

GPU_RETRY_S, GPU_RETRY_MAX_S = 5.0, 300.0  # before a stopped nvidia-smi runs again
GPU_STEADY_S = 60.0  # after running this long, the next stop waits GPU_RETRY_S again


async def read_log(
    watch: Watch, follower: LogFollower, path: str, backlog: Backlog, grace: float | None
) -> bool:
    """Feed the log's events into `watch` until its stream ends (then its last line
    counts, and the link says ended). False, at once, when the log was never opened
    and stayed missing longer than `grace` seconds (None: as long as it takes)."""
    give_up = asyncio.timeout(None)
    try:
        async with give_up:
            await _events(watch, follower, path, backlog, grace, give_up)
    except TimeoutError:
        if not give_up.expired():
            raise
        return False
    if watch.link == linkstate.LIVE:
        watch.end()
        watch.link = linkstate.ENDED
    return True


async def _events(
    w: Watch,
    follower: LogFollower,
    path: str,
    backlog: Backlog,
    grace: float | None,
    give_up: asyncio.Timeout,
) -> None:
    loop = asyncio.get_running_loop()
    opened = False
    async with contextlib.aclosing(follower.events()) as events:
        async for ev in events:
            if isinstance(ev, LogData):
                await backlog.feed(ev.data, ev.offset)
            elif isinstance(ev, LogTail):
                await backlog.tail(ev.data, ev.end)
            elif isinstance(ev, LogOpened):
                opened = True
                give_up.reschedule(None)
                backlog.opened(ev)
                w.link = linkstate.LIVE
            elif isinstance(ev, LogHole):
                backlog.skip(ev.offset)
                w.note = (
                    f"{path}: its first {ev.offset / 2**20:.1f} MiB are NUL bytes, skipped "
                    "(copied and truncated under a writer that does not append)"
                )
            elif isinstance(ev, LogMissing):
                w.link, w.note = linkstate.WAITING, f"{path}: {ev.error}; waiting for it"
                if grace is not None and not opened:
                    give_up.reschedule(give_up.when() or loop.time() + grace)
            elif isinstance(ev, LogNote):
                w.note = ev.message
            elif isinstance(ev, LogDetached):
                w.note = (
                    f"{path} was {ev.why} while followed; still reading what the server "
                    f"writes to it"
                )
            elif isinstance(ev, LinkDown):
                w.link = linkstate.stale(ev.reason)
            elif isinstance(ev, LinkUp):
                w.link = linkstate.LIVE
            elif isinstance(ev, LogFailed):
                w.link, w.note = linkstate.FAILED, ev.message


async def read_gpus(link: Link, watch: Watch, retry_s: float = GPU_RETRY_S) -> None:
    """The host's GPU samples into `watch`, or why there are none. An nvidia-smi that
    stops (killed, a driver reset) is started again, `retry_s` later and twice as late
    each time it stops again within a minute (at most GPU_RETRY_MAX_S), the panel saying
    so meanwhile: a dashboard left open for days would otherwise lose its GPUs for good."""
    wait, loop = retry_s, asyncio.get_running_loop()
    while True:
        started, stopped = loop.time(), None
        async with contextlib.aclosing(GpuStream(link).events()) as events:
            async for ev in events:
                if isinstance(ev, GpuData):
                    bad = watch.gpu.bad_rows
                    watch.feed_gpu(ev.data)
                    if watch.gpu_note and watch.gpu.bad_rows == bad and watch.gpu.gpus:
                        watch.gpu_note = ""  # samples again
                elif isinstance(ev, GpuUnavailable):
                    watch.gpu_note, stopped = ev.message, ev
        if stopped is None or not stopped.retry:
            return
        if (task := asyncio.current_task()) is not None and task.cancelling():
            # cancelled, and the cancel dropped on its way (live/stopping.py): the
            # session is ending, not nvidia-smi stopping
            raise asyncio.CancelledError
        if loop.time() - started > GPU_STEADY_S:
            wait = retry_s
        watch.gpu_note = f"{stopped.message}; starting it again in {wait:.3g} s"
        await asyncio.sleep(wait)
        wait = min(wait * 2, GPU_RETRY_MAX_S)
