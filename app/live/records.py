"""What changed on a watched host, as event records: the JSON lines of `sgwatch events`,
and the plain lines of `sgwatch wait`.

`Tracker(watch).changes()` returns the events since its last call, oldest first:
the Watch's transitions (link, phase, ready, crash; decided there, once) and the
data that changed with them (progress steps, throughput, GPU samples), each with
the transition it reports (`wait` decides its outcome from those, follow.py). Server
events wait until the session has read the bytes that were already in the log
(`watch.caught_up`): a log's past comes out as one snapshot of the current run
(its phase, ready, crash, the capture in progress), not as a replay of every step.
Field names are stable (README: `events --json`).
Pure: no I/O, no asyncio.
"""

from __future__ import annotations

import json
import shlex
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sgwatch.core import display
from sgwatch.core import events as ev
from sgwatch.core.gpu import GpuSample
from sgwatch.core.state import Capture, ServerState
from sgwatch.core.summary import iso, remedy_out, summarize
from sgwatch.live.linkstate import Link
from sgwatch.live.transition import CRASHED, LINK, NEW_RUN, NOTE, PHASE, READY, Transition
from sgwatch.live.watch import Watch

Event = dict[str, Any]
# Every kind of event, as `events --only` names them.
KINDS = (
    "link",
    "note",
    "phase",
    "progress",
    "throughput",
    "gpu",
    "ready",
    "crash",
    "timeout",
    "probe",  # a pod's warmup against its probe's budget (cli/pods.py emits it)
)


@dataclass(frozen=True, slots=True)
class Change:
    event: Event
    cause: Transition | None = None  # the transition it reports; None: data alone


Add = Callable[..., None]  # (event, its transition if any)


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Tracker:
    """Turns a Watch's transitions, and the data that changed with them (progress
    steps, throughput, GPU samples), into event records."""

    def __init__(
        self,
        watch: Watch,
        now: Callable[[], str] = utc_now,
        crash_hold_s: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._watch = watch
        self._now = now
        # A crash seen only by a vague line waits this long for its exception line.
        self._crash_hold_s, self._clock = crash_hold_s, clock
        self._crash_since: float | None = None
        self._queue: deque[Transition] = deque()
        self._was_stale = False
        self._note = ""
        self._gpu: dict[int, GpuSample] = {}
        self._seen_run = False  # the first look at a run is a snapshot of its past
        self._crash: Transition | None = None  # a crash published, not yet reported
        self._progress: dict[object, tuple[int | None, int | None]] = {}
        self._samples = 0
        self.close = watch.subscribe(self._queue.append)

    def changes(self) -> list[Change]:
        """New events since the last call, oldest first."""
        watch, out = self._watch, []

        def add(event: Event, cause: Transition | None = None) -> None:
            out.append((event, cause))

        server = []
        while self._queue:
            t = self._queue.popleft()
            if t.kind == LINK:
                add(self._link_event(t), t)
            elif t.kind == NOTE:
                if t.value and t.value != self._note:
                    self._note = t.value
                    add({"event": "note", "text": t.value}, t)
            else:
                server.append(t)
        if watch.caught_up:
            self._server(watch.state, server, add)
        for index, track in sorted(watch.gpu.gpus.items()):
            if self._gpu.get(index) is not track.latest:
                self._gpu[index] = track.latest
                add(_gpu_event(track.latest))
        t, host = self._now(), watch.label
        return [
            Change({"event": e.pop("event"), "host": host, "time": t, **e}, cause)
            for e, cause in out
        ]

    def _link_event(self, t: Transition) -> Event:
        assert t.link is not None
        kind, reason = t.link.kind, t.link.cause
        reconnected = kind is Link.LIVE and self._was_stale
        if kind in (Link.LIVE, Link.STALE):
            self._was_stale = kind is Link.STALE
        if kind in (Link.FAILED, Link.WAITING):  # the note says why: it is the reason
            reason, self._note = self._watch.note, self._watch.note
        return {
            "event": "link",
            "state": kind.value,
            "reason": reason or None,
            "source": self._watch.source or None,
            "reconnected": reconnected,
        }

    def _server(
        self,
        s: ServerState,
        transitions: list[Transition],
        add: Add,
    ) -> None:
        fresh = not self._seen_run  # the first look: the log's past is a snapshot
        self._seen_run = True
        phases, new_run = [], False
        for t in transitions:
            if t.kind == NEW_RUN:
                self._samples, self._crash, new_run = 0, None, True
                self._progress.clear()
            elif t.kind == PHASE:
                phases.append(t)
            elif t.kind == CRASHED and t.run is s:
                self._crash, self._crash_since = t, self._clock()
        # Steps that finished a phase come before the next phase, the others after it.
        self._progress_events(s, add, fresh, finished=True)
        for t in phases:
            phase = next((p for p in reversed(t.run.phases) if p.name == t.value), None)
            add(
                {
                    "event": "phase",
                    "state": t.value,
                    "previous": t.previous,
                    "new_run": new_run,
                    "ts": iso(phase.started_at if phase else s.now_ts),
                },
                t,
            )
            new_run = False
        self._progress_events(s, add, fresh, finished=False)
        if s.throughput.samples != self._samples:
            self._samples = s.throughput.samples
            add(_throughput_event(s))
        ready = next((t for t in transitions if t.kind == READY and t.run is s), None)
        if ready is not None:
            summary = summarize(s)
            add(
                {
                    "event": "ready",
                    "ready_at": summary.ready_at,
                    "warmup_seconds": summary.warmup_seconds,
                },
                ready,
            )
        held = self._crash
        crash = s.crash if held is not None and held.run is s else None
        if crash is not None and (crash.specific or self.crash_due is None):
            self._crash = self._crash_since = None
            add(crash_event(s), held)

    @property
    def crash_due(self) -> float | None:
        """When a crash held for its exception line is reported anyway (clock time);
        None when none is held, or its time has come."""
        if self._crash is None or self._crash_since is None:
            return None
        due = self._crash_since + self._crash_hold_s
        return due if self._clock() < due else None

    def _progress_events(self, s: ServerState, add: Add, fresh: bool, finished: bool) -> None:
        w = s.weights
        loading = s.state == ev.LOADING_WEIGHTS
        step = (w.done, w.total)
        if w.done is not None and loading != finished and step != self._progress.get("weights"):
            self._progress["weights"] = step
            if not fresh or loading:
                add(_progress("weights", w.done, w.total, None, None))
        for cap in s.captures:
            if cap.open == finished or cap.done is None:
                continue
            if (cap.done, cap.total) == self._progress.get(id(cap)):
                continue
            self._progress[id(cap)] = (cap.done, cap.total)
            if not fresh or cap.open:  # finished captures of the past are in `phase`
                current = int(cap.current) if cap.current and cap.current.isdigit() else None
                add(_progress(cap.kind, cap.done, cap.total, current, cap))


def crash_event(s: ServerState) -> Event:
    c = s.crash
    assert c is not None
    return {
        "event": "crash",
        "summary": c.summary,
        "exception": c.exception,
        "line": c.line,
        "phase": c.phase,
        "exit_code": c.exit_code,
        "ts": iso(c.ts),
        "remedy": None if (r := remedy_out(c.remedy)) is None else r.model_dump(),
    }


def _progress(
    kind: str, done: int, total: int | None, current: int | None, cap: Capture | None
) -> Event:
    rate = cap.items_per_s if cap is not None else None
    eta = cap.eta_s if cap is not None else None
    return {
        "event": "progress",
        "kind": kind,
        "done": done,
        "total": total,
        "current": current,
        "rate": None if rate is None else round(rate, 2),  # items/s over the recent items
        "eta_s": None if eta is None else round(eta, 1),
    }


def _throughput_event(s: ServerState) -> Event:
    t = s.throughput
    fields = s.last_decode.fields if s.last_decode is not None else {}
    return {
        "event": "throughput",
        "gen_tok_s": t.last,
        "samples": t.samples,
        "running_req": _int(fields.get("#running-req")),
        "queue_req": _int(fields.get("#queue-req")),
        "ts": iso(t.history[-1][0] if t.history else None),
    }


def _gpu_event(g: GpuSample) -> Event:
    return {
        "event": "gpu",
        "index": g.index,
        "name": g.name,
        "util_pct": g.util_pct,
        "mem_used_mib": g.mem_used_mib,
        "mem_total_mib": g.mem_total_mib,
        "power_w": g.power_w,
        "temp_c": g.temp_c,
    }


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def restart_command(host: str, remedy: Event) -> str:
    """`sgwatch restart` applying a remedy (its flags without their dashes)."""
    words = ["sgwatch", "restart", host]
    for flag in remedy["drop"]:
        words += ["--unset", flag.lstrip("-")]
    for flag, *values in remedy["add"]:
        name = flag.lstrip("-")
        words += ["--set", f"{name}={' '.join(values)}"] if values else ["--enable", name]
    return shlex.join(words)


class Throttle:
    """Lets a progress event through at most once every `every` seconds of `clock`
    (phases, outcomes and the rest always pass): a warmup of hundreds of capture
    steps reads as a few lines."""

    def __init__(self, every: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._every, self._clock = every, clock
        self._last: float | None = None

    def __call__(self, event: Event) -> bool:
        if event["event"] != "progress":
            return True
        now = self._clock()
        if self._last is not None and now - self._last < self._every:
            return False
        self._last = now
        return True


def to_json(event: Event) -> str:
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False)


def to_line(event: Event) -> str | None:
    """One plain line for `sgwatch wait`; None for the kinds it does not print."""
    kind, host = event["event"], event["host"]
    clock = event["time"][11:19]
    if kind == "link":
        text = {"live": "reconnected" if event["reconnected"] else "following"}.get(
            event["state"], event["state"]
        )
        detail = event["source"] if event["state"] == "live" else event["reason"]
        text += f": {detail}" if detail else ""
    elif kind == "note":
        text = event["text"]
    elif kind == "phase":
        text = f"phase {event['state']}"
    elif kind == "progress":
        total = "?" if event["total"] is None else event["total"]
        text = f"{event['kind']} {event['done']}/{total}"
        if event["current"] is not None:
            text += f" ({event['current']})"
        if event.get("rate"):
            text += f", {event['rate']:g}/s"
        if event.get("eta_s") is not None:
            text += f", ETA {display.eta(event['eta_s'])}"
    elif kind == "ready":
        took = event["warmup_seconds"]
        text = display.badge(ev.READY).word + (f" after {took:.1f} s" if took is not None else "")
    elif kind == "crash":
        text = f"{display.badge(ev.CRASHED).word} during {event['phase']}: {event['summary']}"
        if (remedy := event.get("remedy")) is not None:
            text += f"\n  fix: {remedy['advice']}: {restart_command(host, remedy)}"
    elif kind == "timeout":
        text = f"timed out after {event['seconds']:g} s waiting for {event['until']}"
        text += f" (state: {event['state']})"
    else:
        return None
    return f"{clock} {host} {text}"
