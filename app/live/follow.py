"""Follow one session headless until its server reaches a state, crashes, or time runs out.

`sgwatch wait`, `sgwatch events` and `sgwatch restart` (following the new run) call
`follow`. It runs the session, wakes on every feed of its Watch (the `on_change`
hook: a ready or crash line is judged as soon as its bytes are parsed), and hands
each event (transitions.py) to `emit`. Link and note changes, which no feed
announces, are looked at every LOOK seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from sgwatch.core import events as ev
from sgwatch.live.session import Session
from sgwatch.live.transitions import Event, Tracker, utc_now
from sgwatch.live.watch import Watch
from sgwatch.transport.errors import TransportError

READY, CRASHED, TIMED_OUT, UNREACHABLE = 0, 1, 2, 3  # exit codes of `sgwatch wait`
UNTIL = ("ready", "serving")
LOOK = 0.25
# A crash seen only by a vague line ("Scheduler hit an exception") waits this long
# for its exception line, which names the cause; the detection budget is 100 ms.
CRASH_SETTLE = 0.05


async def follow(
    session: Session, until: str | None, timeout: float | None, emit: Callable[[Event], None]
) -> int:
    """Run `session` and emit its events until the server is `until` ("ready": ready
    or serving; "serving"), returning READY; CRASHED on a crash; TIMED_OUT after
    `timeout` seconds (None: no limit); UNREACHABLE when the host, the server or its
    log cannot be reached, or the log stream ends first. With `until=None` it follows
    until the log stream ends (READY) and reports crashes without stopping."""
    if until is not None and until not in UNTIL:
        raise ValueError(f"until must be one of {UNTIL}, not {until!r}")
    loop = asyncio.get_running_loop()
    watch, tracker = session.watch, Tracker()
    changed = asyncio.Event()
    watch.on_change = changed.set
    task = asyncio.create_task(session.run())
    task.add_done_callback(lambda _: changed.set())
    deadline = None if timeout is None else loop.time() + timeout
    settle_until: float | None = None
    try:
        while True:
            changed.clear()
            _failure(task, watch)
            crash = watch.state.crash if watch.caught_up else None
            if crash is None:
                settle_until = None
            elif settle_until is None:
                settle_until = loop.time() + CRASH_SETTLE
            holding = crash is not None and not crash.specific and loop.time() < settle_until
            for event in tracker.changes(watch, hold_crash=holding):
                emit(event)
            code = _verdict(watch, until, holding)
            if code is not None:
                return code
            if task.done():  # the session stopped without saying why
                return UNREACHABLE
            wake = LOOK
            if deadline is not None:
                if loop.time() >= deadline:
                    emit(_timeout(watch, until, timeout))
                    return TIMED_OUT
                wake = min(wake, deadline - loop.time())
            if holding:
                wake = min(wake, settle_until - loop.time())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), max(wake, 0.0))
    finally:
        watch.on_change = None
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, TransportError):
            await task


def _failure(task: asyncio.Task, watch: Watch) -> None:
    """A reconnect refused for good (a changed host key) ends the session with an
    error: show it as the link's failure."""
    if task.done() and not task.cancelled() and (error := task.exception()) is not None:
        if not isinstance(error, TransportError):
            raise error
        watch.link, watch.note = "failed", str(error)


def _verdict(watch: Watch, until: str | None, holding: bool) -> int | None:
    """The exit code once the outcome is known, else None."""
    if watch.link == "failed":
        return UNREACHABLE
    state = watch.state.state if watch.caught_up else None
    if until is not None:
        if state == ev.CRASHED and not holding:
            return CRASHED
        if state == ev.SERVING or (until == "ready" and state == ev.READY):
            return READY
    if watch.link == "ended":
        return READY if until is None else UNREACHABLE
    return None


def _timeout(w: Watch, until: str | None, timeout: float | None) -> Event:
    return {
        "event": "timeout",
        "host": w.label,
        "time": utc_now(),
        "seconds": timeout,
        "until": until,
        "state": w.state.state if w.caught_up else w.link,
    }
