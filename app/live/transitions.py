"""What changed on a watched host, as events: the records of `sgwatch events --json`,
and the plain lines of `sgwatch wait`.

`Tracker.changes(watch)` compares the Watch with what it saw last time and returns
the new events, oldest first. Server events wait until the session has read the
bytes that were already in the log (`watch.caught_up`): a log's past comes out as
one snapshot of the current run (its phase, ready, crash, the capture in progress),
not as a replay of every step. Field names are stable (README: `events --json`).
Pure: no I/O, no asyncio.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sgwatch.core import events as ev
from sgwatch.core.gpu import GpuSample
from sgwatch.core.state import Capture, ServerState
from sgwatch.core.summary import iso, summarize
from sgwatch.live.watch import Watch

Event = dict[str, Any]


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Tracker:
    def __init__(self, now: Callable[[], str] = utc_now) -> None:
        self._now = now
        self._link: str | None = None
        self._was_stale = False
        self._note = ""
        self._gpu: dict[int, GpuSample] = {}
        self._captures: list[Capture] | None = None  # the run's own list: a new run has another
        self._phase: str | None = None
        self._ready = False
        self._crashed = False
        self._progress: dict[object, tuple[int | None, int | None]] = {}
        self._samples = 0

    def changes(self, watch: Watch, hold_crash: bool = False) -> list[Event]:
        """New events since the last call. `hold_crash`: a crash seen so far only by
        a vague line is not reported yet (its exception line may be on its way)."""
        out: list[Event] = []
        add = out.append
        if watch.link != self._link:
            add(self._link_event(watch))
        if watch.note and watch.note != self._note:
            self._note = watch.note
            add({"event": "note", "text": watch.note})
        if watch.caught_up:
            self._server(watch.state, add, hold_crash)
        for index, track in sorted(watch.gpu.gpus.items()):
            if self._gpu.get(index) is not track.latest:
                self._gpu[index] = track.latest
                add(_gpu_event(track.latest))
        t, host = self._now(), watch.label
        return [{"event": e.pop("event"), "host": host, "time": t, **e} for e in out]

    def _link_event(self, watch: Watch) -> Event:
        state, _, reason = watch.link.partition(": ")
        reconnected = state == "live" and self._was_stale
        self._link = watch.link
        if state in ("live", "stale"):
            self._was_stale = state == "stale"
        if state in ("failed", "waiting"):  # the note says why: it is the reason
            reason, self._note = watch.note, watch.note
        return {
            "event": "link",
            "state": state,
            "reason": reason or None,
            "source": watch.source or None,
            "reconnected": reconnected,
        }

    def _server(self, s: ServerState, add: Callable[[Event], None], hold_crash: bool) -> None:
        fresh = self._captures is None  # the first look: the log's past is a snapshot
        new_run = not fresh and s.captures is not self._captures
        if new_run:
            self._ready, self._crashed, self._samples = False, False, 0
            self._progress.clear()
        self._captures = s.captures
        # Steps that finished a phase come before the next phase, the others after it.
        self._progress_events(s, add, fresh, finished=True)
        if new_run or s.state != self._phase:
            phase = s.phases[-1] if s.phases and s.phases[-1].name == s.state else None
            add(
                {
                    "event": "phase",
                    "state": s.state,
                    "previous": self._phase,
                    "new_run": new_run,
                    "ts": iso(phase.started_at if phase else s.now_ts),
                }
            )
            self._phase = s.state
        self._progress_events(s, add, fresh, finished=False)
        if s.throughput.samples != self._samples:
            self._samples = s.throughput.samples
            add(_throughput_event(s))
        if s.ready and not self._ready:
            self._ready = True
            summary = summarize(s)
            add(
                {
                    "event": "ready",
                    "ready_at": summary.ready_at,
                    "warmup_seconds": summary.warmup_seconds,
                }
            )
        crash = s.crash
        if crash is not None and not self._crashed and (crash.specific or not hold_crash):
            self._crashed = True
            add(crash_event(s))

    def _progress_events(
        self, s: ServerState, add: Callable[[Event], None], fresh: bool, finished: bool
    ) -> None:
        w = s.weights
        loading = s.state == ev.LOADING_WEIGHTS
        step = (w.done, w.total)
        if w.done is not None and loading != finished and step != self._progress.get("weights"):
            self._progress["weights"] = step
            if not fresh or loading:
                add(_progress("weights", w.done, w.total, None))
        for cap in s.captures:
            if cap.open == finished or cap.done is None:
                continue
            if (cap.done, cap.total) == self._progress.get(id(cap)):
                continue
            self._progress[id(cap)] = (cap.done, cap.total)
            if not fresh or cap.open:  # finished captures of the past are in `phase`
                current = int(cap.current) if cap.current and cap.current.isdigit() else None
                add(_progress(cap.kind, cap.done, cap.total, current))


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
    }


def _progress(kind: str, done: int, total: int | None, current: int | None) -> Event:
    return {"event": "progress", "kind": kind, "done": done, "total": total, "current": current}


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
    elif kind == "ready":
        took = event["warmup_seconds"]
        text = "READY" + (f" after {took:.1f} s" if took is not None else "")
    elif kind == "crash":
        text = f"CRASHED during {event['phase']}: {event['summary']}"
    elif kind == "timeout":
        text = f"timed out after {event['seconds']:g} s waiting for {event['until']}"
        text += f" (state: {event['state']})"
    else:
        return None
    return f"{clock} {host} {text}"
