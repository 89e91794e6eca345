"""Follow one session headless until its server reaches a state, crashes, or time runs out.

`sgwatch wait`, `sgwatch events` and `sgwatch restart` (following the new run) call
`follow`. It runs the session, wakes on every transition its Watch publishes and
every feed (`Watch.listen`: a ready or crash line is judged as soon as its
bytes are parsed), hands each event (records.py) to `emit`, and decides the
outcome from the transition each event reports (`outcome`), once.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Callable

from sgwatch.core import events as ev
from sgwatch.live import linkstate
from sgwatch.live import transition as kinds
from sgwatch.live.linkstate import Link
from sgwatch.live.records import Event, Tracker, utc_now
from sgwatch.live.session import Session
from sgwatch.live.stopping import stopped
from sgwatch.live.transition import Transition
from sgwatch.live.watch import Watch
from sgwatch.transport.errors import TransportError

# How following ended; each command turns it into its exit status (cli/exitcodes.py).
READY, CRASHED, TIMED_OUT, UNREACHABLE = "ready", "crashed", "timed out", "unreachable"
ENDED = "ended"  # the log's writer is gone and its run ended without a crash
UNTIL = ("ready", "serving")
# A crash seen only by a vague line ("Scheduler hit an exception") waits this long
# for its exception line, which names the cause; the detection budget is 100 ms.
CRASH_SETTLE = 0.05


async def follow(
    session: Session,
    until: str | None,
    timeout: float | None,
    emit: Callable[[Event], None],
    outcome_only: bool = False,
) -> str:
    """Run `session` and emit its events until the server is `until` ("ready": ready
    or serving; "serving"), returning READY; CRASHED on a crash; TIMED_OUT after
    `timeout` seconds (None: no limit); ENDED when the log's writer is gone and its run
    ended without a crash (ServerState.ended); UNREACHABLE when the host, the server or its
    log cannot be reached, or the log stream ends first (`session.unfollowed` then says
    whether the host answered with nothing to follow). With `until=None` it follows
    until the log stream ends (READY) and reports crashes without stopping.
    `outcome_only`: emit only the events that decide, and a timeout."""
    if until is not None and until not in UNTIL:
        raise ValueError(f"until must be one of {UNTIL}, not {until!r}")
    loop = asyncio.get_running_loop()
    watch = session.watch
    tracker = Tracker(watch, crash_hold_s=CRASH_SETTLE, clock=loop.time)
    changed = asyncio.Event()
    unlisten = watch.listen(changed.set)  # data (progress, throughput) as well as transitions
    unsubscribe = watch.subscribe(lambda _: changed.set())
    task = asyncio.create_task(session.run())
    task.add_done_callback(lambda _: changed.set())
    deadline = None if timeout is None else loop.time() + timeout
    try:
        while True:
            changed.clear()
            _failure(task, watch)
            code = None
            for change in tracker.changes():
                decided = None if change.cause is None else outcome(change.cause, until)
                if decided is not None or not outcome_only:
                    emit(change.event)
                code = decided or code
            if code is not None:
                return code
            if task.done():  # the session stopped without saying why
                return UNREACHABLE
            wake = None
            if deadline is not None:
                if loop.time() >= deadline:
                    emit(_timeout(watch, until, timeout))
                    return TIMED_OUT
                wake = deadline - loop.time()
            if tracker.crash_due is not None:
                wake = min(wake or math.inf, tracker.crash_due - loop.time())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(None if wake is None else max(wake, 0.0)):
                    await changed.wait()
    finally:
        unsubscribe()
        tracker.close()
        unlisten()
        await stopped(task)
        with contextlib.suppress(asyncio.CancelledError, TransportError):
            await task


def _failure(task: asyncio.Task, watch: Watch) -> None:
    """A reconnect refused for good (a changed host key) ends the session with an
    error: show it as the link's failure."""
    if task.done() and not task.cancelled() and (error := task.exception()) is not None:
        if not isinstance(error, TransportError):
            raise error
        watch.link, watch.note = linkstate.FAILED, str(error)


def outcome(t: Transition, until: str | None) -> str | None:
    """How following ends once `t` is reported, waiting for `until`; None: not yet."""
    if t.kind == kinds.LINK and t.link is not None:
        if t.link.kind is Link.FAILED:
            return UNREACHABLE
        if t.link.kind is Link.ENDED:
            return READY if until is None else UNREACHABLE
        return None
    if until is None:
        return None
    if t.kind == kinds.CRASHED:
        return CRASHED
    if t.run is not None and t.run.ended is not None:
        return ENDED  # its ready line is its past: the server that printed it is gone
    ready = t.kind == kinds.READY and until == "ready"
    return READY if ready or (t.kind == kinds.PHASE and t.value == ev.SERVING) else None


def _timeout(w: Watch, until: str | None, timeout: float | None) -> Event:
    return {
        "event": "timeout",
        "host": w.label,
        "time": utc_now(),
        "seconds": timeout,
        "until": until,
        "state": w.state.state if w.caught_up else str(w.link),
    }
