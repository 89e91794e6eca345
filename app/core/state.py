"""Reducer: events -> ServerState, the one snapshot every view reads.

`ServerState.apply(event)` folds one event in place (one call per log line,
so no copies). The rules for `state` (docs/design/architecture.md): the latest evidence
wins, warmup only moves forward (graph capture and compilation may alternate),
a crash holds until a new run starts, and every history is bounded.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from functools import partial
from typing import Any

from sgwatch.core import events as ev
from sgwatch.core.eta import bar_eta, bar_rate
from sgwatch.core.identity import RunIdentity
from sgwatch.core.ratecounts import RateCounts

HISTORY = 3600  # throughput samples kept for charts
MAX_PHASES = 64  # per run; a pathological log cannot grow the list past this
MAX_CAPTURES = 64
# The key of the resolved settings under which a server's own overrides are kept:
# {setting: (requested or None, the log line that says why)}.
OVERRIDDEN = "_overridden"
MAX_MARKS = 512  # frames kept per bar for its recent rate
MAX_TIMINGS = 64  # start-up steps the server timed, per run

_CAPTURE_STAGE = (ev.CAPTURING_GRAPHS, ev.COMPILING)
_FRAME_LINE = re.compile(r"  File \"|    ").match  # a traceback's frame or its code
# Which capture entries a bar of each kind can belong to ("Capturing batches"
# draws the target decode, verify and draft captures alike).
_BAR_TARGETS = {
    "decode": ("decode", "verify", "draft", "draft_extend"),
    "prefill": ("prefill", "draft_prefill"),
    "piecewise": ("piecewise",),
    "compile": ("compile",),
    # A bar whose label names the draft model's graphs (vLLM's speculators).
    "draft": ("draft",),
    "draft_prefill": ("draft_prefill",),
}


@dataclass(slots=True)
class Phase:
    name: str
    started_at: str | None
    ended_at: str | None = None
    seconds: float | None = None
    # A boundary set by an untimed tqdm frame is placed by the bar's own clock.
    started_estimated: bool = False
    ended_estimated: bool = False


@dataclass(slots=True)
class Capture:
    kind: str
    done: int | None = None
    total: int | None = None
    seconds: float | None = None
    sizes: list[int] | None = None
    current: str | None = None  # bs / num_tokens being captured now
    mem_usage_gb: float | None = None  # per rank, the largest rank's
    rate: str | None = None
    bar_elapsed_s: float | None = None
    bar_started_at: str | None = None  # log time when its first bar frame appeared
    open: bool = True
    ranks: set[str | None] = field(default_factory=set)  # ranks that began it
    ended_by: set[str | None] = field(default_factory=set)  # ranks that ended it
    # (tqdm elapsed seconds, items done) of its bar's frames, one per item count.
    marks: list[tuple[float, int]] = field(default_factory=list)

    @property
    def items_per_s(self) -> float | None:
        """The bar's rate over its recent items (core/eta.py), tqdm's elapsed clock."""
        return bar_rate(self.marks)

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the recent rate: a slow first item does not inflate it."""
        if not self.open or not self.done:
            return None
        return bar_eta(self.marks, self.total)


@dataclass(slots=True)
class WeightsProgress:
    done: int | None = None
    total: int | None = None
    seconds: float | None = None
    mem_usage_gb: dict[str, float] = field(default_factory=dict)  # per rank, the target model's
    # A rank's second weight load is the speculative draft model's (it loads after the
    # target's graphs are captured): kept apart, so the target's figure stays.
    draft_mem_usage_gb: dict[str, float] = field(default_factory=dict)
    arch: str | None = None  # the target model's class, as the load line names it
    bar_started_at: str | None = None


# Newest samples as given, in chunks: sources and what makes a sample of one, (log
# time, tok/s): a run's decode lines and their reader, or (ts, value) pairs as they are.
_Chunk = tuple[list[Any], Callable[[Any], tuple[str | None, float]]]


@dataclass(slots=True)
class Throughput:
    """Generation throughput: every decode sample counted, the newest kept.

    A serving log holds millions of samples, so a run of them is taken as the
    rates' buckets as printed (`ServingRun`), counted in 0.1 tok/s buckets
    (core/ratecounts.py: the median is within 0.05 tok/s), and its lines are
    read only where a reader needs them: the newest `HISTORY` for the chart.
    """

    samples: int = 0
    _last: tuple[Any, Callable[[Any], Any]] | None = None  # the newest sample and its reader
    _counts: RateCounts = field(default_factory=RateCounts)  # every sample, in 0.1 tok/s buckets
    _median: tuple[int, float | None] = (0, None)  # (samples, median) of the last read
    _raw: deque[_Chunk] = field(default_factory=deque)  # at least the newest HISTORY samples
    _raw_n: int = 0  # samples in _raw
    _fresh: int = 0  # raw samples not yet in _history
    _history: deque[tuple[str | None, float]] = field(default_factory=lambda: deque(maxlen=HISTORY))
    _accept_sum: float = 0.0
    _accept_n: int = 0

    def add(self, ts: str | None, value: float, accept_len: float | None) -> None:
        self.samples += 1
        self._last = (value, float)
        self._counts.add(value)
        self._keep([(ts, value)], _as_is)
        if accept_len is not None:
            self._accept_sum += accept_len
            self._accept_n += 1

    def add_run(self, run: ev.ServingRun) -> None:
        buckets, lines = run.gen_buckets, run.lines
        self.samples += len(buckets)
        self._last = (lines[-1], run.rate)  # the lines cover the newest rates
        self._counts.add_buckets(buckets, run.in_bucket)
        self._keep(lines, partial(_sample, run.stamp, run.rate))
        self.add_accept(run.accept_len)

    def _keep(self, sources: list[Any], sample: Callable[[Any], tuple[str | None, float]]) -> None:
        raw = self._raw
        raw.append((sources, sample))
        self._raw_n += len(sources)
        self._fresh += len(sources)
        while self._raw_n - len(raw[0][0]) >= HISTORY:  # the oldest chunk is not needed
            self._raw_n -= len(raw.popleft()[0])

    def extend(self, later: Throughput) -> None:
        """Go on with the samples `later` took from the lines after this one's."""
        if later.samples:
            self.history.extend(later.history)  # this one's samples read out first, then later's
            self._raw, self._raw_n, self._fresh = later._raw, later._raw_n, 0
            self._last = later._last
            self.samples += later.samples
            self._counts.extend(later._counts)
        self._accept_sum += later._accept_sum
        self._accept_n += later._accept_n

    def add_accept(self, values: list[float]) -> None:
        """Acceptance lengths (vLLM logs them on lines of their own, without a rate)."""
        self._accept_sum += sum(values)
        self._accept_n += len(values)

    @property
    def last(self) -> float | None:
        if self._last is None:
            return None
        source, read = self._last
        return float(read(source))

    @property
    def max(self) -> float | None:
        return self._counts.max()

    @property
    def history(self) -> deque[tuple[str | None, float]]:
        """(log time, tok/s) of the newest samples, oldest first."""
        if self._fresh:
            need, parts = min(self._fresh, self._raw_n), []
            for sources, sample in reversed(self._raw):
                if need <= 0:
                    break
                part = sources[max(0, len(sources) - need) :]
                parts.append(map(sample, part))
                need -= len(part)
            for part in reversed(parts):
                self._history.extend(part)
            self._fresh = 0
        return self._history

    @property
    def median(self) -> float | None:
        if self._median[0] != self.samples:
            self._median = (self.samples, self._counts.median())
        return self._median[1]

    @property
    def accept_len_mean(self) -> float | None:
        return self._accept_sum / self._accept_n if self._accept_n else None


def _as_is(sample: tuple[str | None, float]) -> tuple[str | None, float]:
    return sample


def _sample(
    stamp: Callable[[str], str], rate: Callable[[str], str], line: str
) -> tuple[str | None, float]:
    return stamp(line), float(rate(line))


@dataclass(slots=True)
class CrashInfo:
    summary: str
    line: str
    exception: str | None
    phase: str  # the state the server was in when it died
    ts: str | None
    specific: bool
    exit_code: int | None
    explained: bool = False  # the server's own account: later exception lines keep it
    remedy: ev.Remedy | None = None


class ServerState:
    """Everything known about the server's current run, built from events."""

    def __init__(self) -> None:
        self.lines = 0
        self.runs = 0
        self.engine: str | None = None
        self.version: str | None = None  # when the log states it (vLLM's banner does)
        self.last_ts: str | None = None
        # Overrides said since the last warmup evidence: SGLang warns while it resolves
        # its arguments, before the dump that starts the run they belong to.
        self._said: dict[str, tuple[Any, Any, str]] = {}
        self._new_run(None, count=False)

    def _new_run(self, ts: str | None, count: bool = True) -> None:
        if count:
            self.runs += 1
        self.state = ev.STARTING
        self.ready = False
        self.ready_at: str | None = None
        self.run_started_at = ts
        # The run's resolved settings, in the engine's own names: handed back only to
        # that engine's functions (engines/base.py); everything else reads `identity`.
        self.args: dict[str, Any] = {}
        self.identity: RunIdentity | None = None  # once the log dumps the settings
        self.phases: list[Phase] = []
        self.captures: list[Capture] = []
        self.weights = WeightsProgress()
        self.throughput = Throughput()
        self.crash: CrashInfo | None = None
        self.kv_tokens: int | None = None
        self.max_total_num_tokens: int | None = None
        self.last_decode: ev.Batch | None = None  # running/queued/usage, read on demand
        self.requests = 0
        # torch.compile: "hit" once its graphs loaded from the compile cache, "miss" once
        # one compiled anew (a miss anywhere is a miss); its seconds, the total line's
        # when it comes (the slowest rank's), else its graphs' so far.
        self.compile_cache: str | None = None
        self.compile_s: float | None = None
        self._compile_total = False
        # The server's own account of its start-up steps, seconds by its names for them.
        self.startup_timings: dict[str, float] = {}
        # Its whole start-up by its own clock, and where it said so (its HTTP API, asked
        # once it is up): beside the time to ready measured from the log's stamps.
        self.server_startup_s: float | None = None
        self.server_startup_from: str | None = None
        # Why the run is over though its log said nothing: its writer is gone (writer_gone).
        self.ended: str | None = None
        self._seen_activity = False  # anything beyond a run marker in this run
        self._soft_warmup = False  # warming_up only because every capture ended
        self._bar_clock: str | None = None  # estimated end of the latest untimed bar
        self._draft_loaded = False  # weights loaded after a capture: the draft model's
        self._went_serving: tuple[str | None] | None = None  # (its log time) once it did

    @property
    def now_ts(self) -> str | None:
        """The latest log time known: the last stamp, or later if untimed bars ran since."""
        clock, last = self._bar_clock, self.last_ts
        if clock is None or last is None or (" " in clock) != (" " in last):
            return last or clock
        return max(clock, last)

    def extend(self, later: ServerState) -> None:
        """Go on with `later`: what a fresh parse built from the lines after this state's,
        having seen only SERVING_EVENTS. The same as applying those events here: the
        first one that could move a run to serving does it here too, then counters."""
        self.lines += later.lines
        if later._went_serving is not None:  # a fresh run goes serving at its first batch
            self._maybe_serving(later._went_serving[0])
        self.last_ts = later.last_ts or self.last_ts
        self.throughput.extend(later.throughput)
        self.last_decode = later.last_decode or self.last_decode
        self.requests += later.requests

    # -- dispatch -------------------------------------------------------------

    def apply(self, event: ev.Event) -> None:
        ts = getattr(event, "ts", None)
        if ts is not None:
            self.last_ts = ts
        _HANDLERS[type(event)](self, event)

    def _run_started(self, e: ev.RunStarted) -> None:
        if self._seen_activity or self.state in (ev.CRASHED, ev.STOPPED):
            self._new_run(e.ts)
        elif self.runs == 0:
            self.runs = 1
        self.run_started_at = self.run_started_at or e.ts
        if not self.phases:
            self.phases.append(Phase(ev.STARTING, e.ts))
        elif self.phases[0].started_at is None and self.phases[0].name == ev.STARTING:
            # An untimed banner opened the run; its first stamp is when it started.
            self.phases[0].started_at = e.ts
        if e.args is not None:
            self.args = e.args
            for setting, (effective, requested, why) in self._said.items():
                self.args.setdefault(setting, effective)
                self.args.setdefault(OVERRIDDEN, {})[setting] = (requested, why)
        if e.identity is not None:
            self.identity = e.identity
        if e.version is not None:
            self.version = e.version

    def _phase_seen(self, e: ev.PhaseSeen) -> None:
        if e.phase == ev.STARTING:
            if self.state in (ev.CRASHED, ev.STOPPED):
                self._new_run(e.ts)
            self._activity(e.ts)
            if not self.phases:
                self.phases.append(Phase(ev.STARTING, e.ts))
            return
        if e.phase == ev.COMPILING and not (
            self.state == ev.ALLOCATING_KV_CACHE
            or self.state in _CAPTURE_STAGE
            or self._soft_warmup
        ):
            return  # torch.compile noise outside graph capture says nothing new
        self._activity(e.ts)
        if e.phase == ev.WARMING_UP:
            self._close_captures()
            self._enter(ev.WARMING_UP, e.ts, soft=False)
        else:
            self._enter(e.phase, e.ts)

    def _weights_loaded(self, e: ev.WeightsLoaded) -> None:
        self._activity(e.ts)
        self._draft_loaded = self._draft_loaded or bool(self.captures)
        self._enter(ev.ALLOCATING_KV_CACHE, e.ts)
        w = self.weights
        if w.total is not None:
            w.done = w.total
        if e.elapsed_s is not None:
            w.seconds = max(w.seconds or 0.0, e.elapsed_s)
        if e.mem_usage_gb is not None:
            rank = e.rank or "TP0"
            loads = w.draft_mem_usage_gb if rank in w.mem_usage_gb else w.mem_usage_gb
            loads[rank] = e.mem_usage_gb
        w.arch = w.arch or e.arch  # the first load is the target's

    def _kv_cache(self, e: ev.KvCacheSized) -> None:
        self._activity(e.ts)
        self._enter(ev.ALLOCATING_KV_CACHE, e.ts)
        if e.tokens is not None:
            self.kv_tokens = e.tokens

    def _capture_begin(self, e: ev.CaptureBegin) -> None:
        self._activity(e.ts)
        cap = self._open_capture(e.kind)
        if cap is None or e.rank in cap.ranks:
            if cap is not None:
                cap.open = False  # the same rank began again: the old one is over
            cap = self._add_capture(e.kind)
        cap.ranks.add(e.rank)
        if e.sizes is not None and cap.sizes is None:
            cap.sizes, cap.total = e.sizes, cap.total or len(e.sizes)
            cap.done = cap.done or 0
        self._enter(ev.CAPTURING_GRAPHS, e.ts)

    def _capture_sizes(self, e: ev.CaptureSizes) -> None:
        self._activity(e.ts)
        cap = self._open_capture(e.kind) or self._add_capture(e.kind)
        if e.sizes is not None:
            cap.sizes = e.sizes
            cap.done = cap.done or 0  # announced, none captured yet
            if cap.total is None:
                cap.total = len(e.sizes)
        self._enter(ev.CAPTURING_GRAPHS, e.ts)

    def _capture_end(self, e: ev.CaptureEnd) -> None:
        self._activity(e.ts)
        self._enter(ev.CAPTURING_GRAPHS, e.ts)
        cap = self._open_capture(e.kind)
        if cap is None:
            latest = self._latest_capture((e.kind,))
            if latest is not None and e.rank not in latest.ended_by:
                cap = latest  # another rank ending the same capture
            else:
                cap = self._add_capture(e.kind)
        if cap.open:
            cap.open = False
            if cap.total is not None:
                cap.done = cap.total
        cap.ended_by.add(e.rank)
        if e.elapsed_s is not None:
            # The capture lasts as long as its slowest rank.
            cap.seconds = max(cap.seconds or 0.0, e.elapsed_s)
            if not cap.ranks and cap.bar_started_at is None and e.ts is not None:
                self._backdate_capture(e.ts, cap.seconds)
        if e.mem_usage_gb is not None:
            cap.mem_usage_gb = max(cap.mem_usage_gb or 0.0, e.mem_usage_gb)
        self._maybe_soft_warmup(e.ts)

    def _bar_time(self, e: ev.Progress, started_at: str | None) -> tuple[str | None, bool]:
        """When a frame was drawn: its own stamp, else bar start + tqdm's elapsed."""
        if e.ts is not None:
            return e.ts, False
        if started_at is None:
            return None, False
        estimate = shift(started_at, e.elapsed_s or 0.0)
        self._bar_clock = estimate
        return estimate, True

    def _untimed_start(self, after: str | None) -> str | None:
        """An untimed bar starts after the last log stamp and after the bar before it."""
        clock = self._bar_clock
        if after is None or clock is None or (" " in after) != (" " in clock):
            return after or clock
        return max(after, clock)  # ISO stamps of one form sort as text

    def _progress(self, e: ev.Progress) -> None:
        if e.kind == "weights":
            self._draft_loaded = self._draft_loaded or bool(self.captures)
            w = self.weights
            if w.bar_started_at is None or e.n == 0:
                w.bar_started_at = e.ts or self._untimed_start(e.after)
            ts, estimated = self._bar_time(e, w.bar_started_at)
            self._activity(ts)
            self._enter(ev.LOADING_WEIGHTS, ts, estimated=estimated)
            self.weights.done, self.weights.total = e.n, e.total
            if e.elapsed_s is not None and e.n is not None and e.n == e.total:
                self.weights.seconds = self.weights.seconds or e.elapsed_s
            return
        targets = _BAR_TARGETS.get(e.kind)
        if e.kind == "unnamed":  # a bar without a description: the open capture's, if its size
            owner = next(
                (c for c in reversed(self.captures) if c.open and c.total in (None, e.total)), None
            )
            targets = None if owner is None else (owner.kind,)
        if targets is None:
            return
        self._activity(e.ts)
        cap = next((c for c in reversed(self.captures) if c.open and c.kind in targets), None)
        if cap is None:
            latest = self._latest_capture(targets)
            if latest is not None and e.n is not None and e.n == e.total == latest.total:
                return  # tqdm repeats the closing frame of a finished bar
            cap = self._add_capture(self._bar_owner(targets))
        if cap.bar_started_at is None or (e.n == 0 and not cap.done):
            # A bar at 0 starts now, as the weights' does: tqdm's nameless first frame of
            # another bar (a compile before this capture) may have claimed it earlier.
            cap.bar_started_at = e.ts or self._untimed_start(e.after)
        ts, estimated = self._bar_time(e, cap.bar_started_at)
        if e.n is not None:
            cap.done = e.n
        if e.total is not None:
            cap.total = e.total
        cap.current, cap.rate = e.item or cap.current, e.rate or cap.rate
        if e.elapsed_s is not None:
            cap.bar_elapsed_s = e.elapsed_s
            if e.n is not None and (not cap.marks or cap.marks[-1][1] != e.n):
                if len(cap.marks) >= MAX_MARKS:
                    del cap.marks[1 : MAX_MARKS // 2]  # the start and the recent half
                cap.marks.append((e.elapsed_s, e.n))
        # The phase starts when the bar does, not at the first frame we happen to see.
        phase = ev.COMPILING if cap.kind == "compile" else ev.CAPTURING_GRAPHS
        self._enter(phase, e.ts or cap.bar_started_at, estimated=e.ts is None)
        if e.n is not None and e.n == e.total:
            cap.open = False
            if cap.seconds is None:
                cap.seconds = e.elapsed_s
            self._maybe_soft_warmup(ts, estimated)

    def _capacity(self, e: ev.Capacity) -> None:
        self._activity(e.ts)
        self.max_total_num_tokens = e.max_total_num_tokens
        self._close_captures()
        self._enter(ev.WARMING_UP, e.ts, soft=False)

    def _ready(self, e: ev.Ready) -> None:
        if self.state in (ev.CRASHED, ev.STOPPED):
            return  # another tokenizer worker's late line; a new run starts with its own args
        self._activity(e.ts)
        self._close_captures()
        if self.state not in (ev.READY, ev.SERVING):
            self._finish_phases(e.ts)
            self.state = ev.READY
        if not self.ready:
            self.ready, self.ready_at = True, e.ts

    def _batch(self, e: ev.Batch) -> None:
        if e.ts is not None:
            self.last_ts = e.ts
        if e.gen_tok_s is not None:
            self.throughput.add(e.ts, e.gen_tok_s, e.accept_len)
        if e.kind == "decode":
            self.last_decode = e
        self._maybe_serving(e.ts)

    def _maybe_serving(self, ts: str | None) -> None:
        if self.state == ev.READY or (self.state == ev.STARTING and not self._seen_activity):
            # After the ready signal, or an excerpt of a server already serving.
            self._finish_phases(ts)
            self.state = ev.SERVING
            self._went_serving = (ts,)

    def _serving_run(self, e: ev.ServingRun) -> None:
        if e.first_batch_ts is not None:  # as the run's first Batch would, line by line
            self._maybe_serving(e.first_batch_ts)
        self.last_ts = e.last_ts
        if e.gen_buckets:
            self.throughput.add_run(e)
        elif e.accept_len:
            self.throughput.add_accept(e.accept_len)
        if e.last_decode is not None:
            self.last_decode = e.last_decode
        self.requests += e.requests

    def _request(self, e: ev.Request) -> None:
        if not e.health_check:
            self.requests += 1

    def _crash(self, e: ev.Crash) -> None:
        remedy = None if e.remedy is None else e.remedy(self.args)
        c = self.crash
        if c is None:
            # Where the run was (serving included), unless the traceback says where.
            phase = e.phase or self.state
            self.crash = CrashInfo(
                e.summary, e.line, e.exception, phase, e.ts, e.specific, e.exit_code
            )
            self.crash.explained, self.crash.remedy = e.explained, remedy
            self._finish_phases(e.ts)
            self.state = ev.CRASHED
            return
        if e.explained or (e.specific and not c.explained):
            # The latest exception line is the one to act on, unless the server
            # explained the failure itself (then only a fuller explanation replaces it).
            c.summary, c.line = e.summary, e.line
            c.exception = e.exception or (c.exception if e.explained else None)
            c.specific, c.explained = c.specific or e.specific, c.explained or e.explained
        elif e.specific:  # an exception line after the server's own account: its type only
            c.exception, c.specific = c.exception or e.exception, True
        elif not c.specific and _FRAME_LINE(c.line) and _FRAME_LINE(e.line):
            c.summary, c.line = e.summary, e.line  # a traceback's innermost frame so far
        if e.phase is not None:
            c.phase = e.phase
        if remedy is not None:
            c.remedy = remedy
        if e.exit_code is not None:
            c.exit_code = max(c.exit_code or 0, e.exit_code)

    def _overridden(self, e: ev.Overridden) -> None:
        # The resolved settings hold what runs; OVERRIDDEN says what was asked and why.
        self.args[e.setting] = e.effective
        self.args.setdefault(OVERRIDDEN, {})[e.setting] = (e.requested, e.reason)
        self._said[e.setting] = (e.effective, e.requested, e.reason)

    def _resolved(self, e: ev.Resolved) -> None:
        asked = self.args.get(e.setting)
        if asked is not None and asked != e.effective:
            self._overridden(ev.Overridden(e.ts, e.setting, e.effective, asked, e.reason))

    def writer_gone(self) -> str | None:
        """The process that wrote this log is gone and the log says no more (discovery
        found no server writing it). A run that was ready or serving ended there: it
        stopped, with no crash (`ended` says so); one still warming up was killed without
        a word (SIGKILL, the OOM killer): a crash, as a followed server's silent exit is.
        Returns what to tell the user; None: it had crashed or stopped, or holds no run."""
        if self.state in (ev.CRASHED, ev.STOPPED) or not (self._seen_activity or self.runs):
            return None
        at = self.now_ts
        where = self.state.replace("_", " ") + (f" at {_clock_text(at)}" if at else "")
        if self.state in (ev.READY, ev.SERVING):
            self.ended = f"its log ends {where}, no crash"
            self._stopped(ev.Stopped(at))
            return self.ended
        why = f"its log ends {where} with no crash line: killed? (SIGKILL, the OOM killer)"
        self._crash(ev.Crash(ts=at, rank=None, summary=f"server gone; {why}", line=""))
        return why

    def _compiled(self, e: ev.Compiled) -> None:
        self._phase_seen(ev.PhaseSeen(e.ts, e.rank, ev.COMPILING, "torch.compile"))
        if e.cache == "miss" or (e.cache == "hit" and self.compile_cache is None):
            self.compile_cache = e.cache
        if e.seconds is None:
            return
        if e.total:
            first = not self._compile_total
            self.compile_s = e.seconds if first else max(self.compile_s or 0.0, e.seconds)
            self._compile_total = True
        elif not self._compile_total:
            self.compile_s = max(self.compile_s or 0.0, e.seconds)

    def _startup_timing(self, e: ev.StartupTiming) -> None:
        for step, seconds in e.steps.items():
            if step in self.startup_timings or len(self.startup_timings) < MAX_TIMINGS:
                self.startup_timings[step] = seconds
        if e.whole is not None and self.server_startup_s is None:
            self.server_startup_s, self.server_startup_from = e.whole, "log"

    def _server_startup(self, e: ev.ServerStartup) -> None:
        if not self.startup_from_api and e.seconds is not None:
            self.server_startup_s, self.server_startup_from = e.seconds, e.source
        for step, seconds in e.steps.items():  # the log's own figures stay
            if step not in self.startup_timings and len(self.startup_timings) < MAX_TIMINGS:
                self.startup_timings[step] = seconds

    @property
    def startup_from_api(self) -> bool:
        """Whether the server's API gave its start-up total (else the log's, rounded, or none)."""
        return self.server_startup_from not in (None, "log")

    def _stopped(self, e: ev.Stopped) -> None:
        if self.state != ev.CRASHED:
            self._finish_phases(e.ts)
            self.state = ev.STOPPED

    # -- helpers --------------------------------------------------------------

    def _activity(self, ts: str | None) -> None:
        if self._said:
            self._said.clear()
        if not self._seen_activity:
            self._seen_activity = True
            if self.runs == 0:
                self.runs = 1
            self.run_started_at = self.run_started_at or ts

    def _enter(
        self, phase: str, ts: str | None, soft: bool = False, estimated: bool = False
    ) -> None:
        """Move to a warmup phase if the evidence is newer than where we are."""
        current = self.state
        if current not in ev.PHASE_RANK:
            return  # ready, serving, crashed, stopped: warmup lines change nothing
        if current == ev.WARMING_UP and self._soft_warmup:
            if phase in _CAPTURE_STAGE and self.phases[-1].name == ev.WARMING_UP:
                # Another capture after all earlier ones ended: still capturing.
                self.phases.pop()
                self.phases[-1].ended_at = self.phases[-1].seconds = None
                self.phases[-1].ended_estimated = False
                current = self.state = self.phases[-1].name
                self._soft_warmup = False
            elif phase == ev.WARMING_UP and not soft:
                self._soft_warmup = False
        if phase == current or ev.PHASE_RANK[phase] < ev.PHASE_RANK[current]:
            return
        self._finish_phases(ts, estimated)
        if len(self.phases) < MAX_PHASES:
            self.phases.append(Phase(phase, ts, started_estimated=estimated))
        self.state = phase
        self._soft_warmup = soft

    def _finish_phases(self, ts: str | None, estimated: bool = False) -> None:
        if self.phases and self.phases[-1].ended_at is None:
            last = self.phases[-1]
            last.ended_at, last.ended_estimated = ts, estimated and ts is not None
            last.seconds = seconds_between(last.started_at, ts)
        self._soft_warmup = False

    def _backdate_capture(self, ts: str, seconds: float) -> None:
        """A capture seen first by its end line (the log begins inside it) began
        `seconds` before that line: so did the capture phase, when it began later."""
        phase = self.phases[-1] if self.phases else None
        start = shift(ts, -seconds)
        if phase is None or phase.name != ev.CAPTURING_GRAPHS or start is None:
            return
        if not (seconds_between(start, phase.started_at) or 0.0) > 0:
            return  # the phase began at or before the capture did
        before = self.phases[-2] if len(self.phases) > 1 else None
        if before is not None and before.started_at is not None:
            if (seconds_between(before.started_at, start) or 0.0) <= 0:
                start = before.started_at  # not before the phase it followed
            before.ended_at, before.ended_estimated = start, True
            before.seconds = seconds_between(before.started_at, start)
        phase.started_at, phase.started_estimated = start, True
        if phase.ended_at is not None:
            phase.seconds = seconds_between(start, phase.ended_at)

    def _maybe_soft_warmup(self, ts: str | None, estimated: bool = False) -> None:
        if self.state in _CAPTURE_STAGE and not any(c.open for c in self.captures):
            self._enter(ev.WARMING_UP, ts, soft=True, estimated=estimated)

    def _close_captures(self) -> None:
        for c in self.captures:
            if c.open:
                c.open = False
                if c.sizes is not None and c.total is not None:
                    c.done = c.total

    def _bar_owner(self, targets: tuple[str, ...]) -> str:
        """The capture a bar that no begin line named belongs to: after the draft
        model's weights, "Capturing batches" bars are the draft's decode, then extend."""
        if targets[0] != "decode" or not self._draft_loaded:
            return targets[0]
        latest = self._latest_capture(targets)
        return "draft_extend" if latest is not None and latest.kind == "draft" else "draft"

    def _open_capture(self, kind: str) -> Capture | None:
        return next((c for c in reversed(self.captures) if c.open and c.kind == kind), None)

    def _latest_capture(self, kinds: tuple[str, ...]) -> Capture | None:
        return next((c for c in reversed(self.captures) if c.kind in kinds), None)

    def _add_capture(self, kind: str) -> Capture:
        cap = Capture(kind)
        if len(self.captures) >= MAX_CAPTURES:
            self.captures.pop(0)
        self.captures.append(cap)
        return cap


_HANDLERS = {
    ev.RunStarted: ServerState._run_started,
    ev.PhaseSeen: ServerState._phase_seen,
    ev.WeightsLoaded: ServerState._weights_loaded,
    ev.KvCacheSized: ServerState._kv_cache,
    ev.CaptureBegin: ServerState._capture_begin,
    ev.CaptureSizes: ServerState._capture_sizes,
    ev.CaptureEnd: ServerState._capture_end,
    ev.Progress: ServerState._progress,
    ev.Capacity: ServerState._capacity,
    ev.Ready: ServerState._ready,
    ev.Batch: ServerState._batch,
    ev.ServingRun: ServerState._serving_run,
    ev.Request: ServerState._request,
    ev.Crash: ServerState._crash,
    ev.Overridden: ServerState._overridden,
    ev.Resolved: ServerState._resolved,
    ev.Compiled: ServerState._compiled,
    ev.StartupTiming: ServerState._startup_timing,
    ev.ServerStartup: ServerState._server_startup,
    ev.Stopped: ServerState._stopped,
}


def seconds_between(start: str | None, end: str | None) -> float | None:
    """Seconds from one log timestamp to another (time-only stamps wrap at midnight)."""
    if start is None or end is None:
        return None
    if (" " in start) != (" " in end):
        return None
    if " " in start:
        diff = (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
        return diff if diff >= 0 else None  # clock went back: logs of two boots joined
    a, b = time.fromisoformat(start), time.fromisoformat(end)
    diff = _clock(b) - _clock(a)
    return diff + 86400 if diff < 0 else diff


def shift(ts: str, seconds: float) -> str | None:
    """A log timestamp moved by `seconds`, in the same form."""
    if " " in ts:
        return (datetime.fromisoformat(ts) + timedelta(seconds=seconds)).isoformat(sep=" ")
    moved = datetime.combine(datetime.min, time.fromisoformat(ts)) + timedelta(seconds=seconds)
    return moved.time().isoformat()


def _clock_text(ts: str) -> str:
    """A log stamp's time of day, to the second: "10:03:12"."""
    return ts.split(" ")[-1].split(".")[0]


def _clock(t: time) -> float:
    return t.hour * 3600 + t.minute * 60 + t.second + t.microsecond / 1e6
