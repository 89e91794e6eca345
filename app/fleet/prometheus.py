"""A fleet from a Prometheus query API: one row per scraped SGLang or vLLM server.

    source = PrometheusSource.open("prod", config.fleets["prod"])   # AuthError: one line
    snap = await source.snapshot()      # every refresh_s (5 s by default)

A refresh asks a fixed set of queries (queries.py: one per figure, the targets' `up`,
one for restarts, one for the GPUs), all at once, whatever the number of servers. The
three that cost Prometheus the most and change the least (the two latency quantiles,
the GPUs) are asked in turn, one per refresh, their last answers kept between: the
first refresh (until each has answered) asks all ten, every later one eight. The scrape targets'
last errors are asked for too when a target has gone down (and every 12th refresh
while some are down).
Refreshes never overlap: a caller that comes while one runs waits for it and gets the
next. When the API does not answer, or not in time, the rows are the last ones marked
stale; after failures the API is asked again only every 2nd, 4th, ... call (at most
every 12th).

State of a row: down when its target's `up` is 0 (the cause is the target's last
scrape error); serving when it generates tokens or runs requests; idle otherwise.
A server restarted between two scrapes (never seen down) says "restarted HH:MM:SS"
for RESTART_WINDOW: its process start time changed, or its token counter went back.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import ValidationError

from sgwatch.config import Fleet
from sgwatch.engines import all_engines, by_name
from sgwatch.engines.base import Engine
from sgwatch.fleet.auth import headers_and_auth
from sgwatch.fleet.gpus import GpuJoin
from sgwatch.fleet.hostmap import HostMap
from sgwatch.fleet.matchers import matcher
from sgwatch.fleet.promapi import Answer, PromApi, PromError, Target
from sgwatch.fleet.queries import (
    ENGINE_LABEL,
    MEASURE_LABEL,
    RESTART_WINDOW,
    Query,
    engine_queries,
    gpu_query,
    restarts_query,
    up_query,
)
from sgwatch.fleet.row import FleetRow, State
from sgwatch.fleet.source import FleetSnapshot

ADDITIVE = frozenset({"gen_tok_s", "running", "waiting"})  # summed over a server's models
MAX_SKIP = 11  # after failures, at most this many calls in a row are answered stale unasked
CAUSES_EVERY = 12  # refreshes between two looks at the targets' errors when nothing new is down
# Asked one per refresh in turn: at 500 servers they were nearly all of Prometheus's
# work (a quantile over every server's buckets; 4,000 GPU series per counter), and a
# 1-minute quantile or a node's GPU figures move little in 15 s.
IN_TURN = ("ttft_p50_s", "itl_p50_s", "gpu")


@dataclass(slots=True)
class _Server:
    labels: dict[str, str]
    up: float | None = None
    engine: str | None = None
    models: set[str] = field(default_factory=set)
    figures: dict[str, list[float]] = field(default_factory=dict)


class PrometheusSource:
    def __init__(
        self,
        name: str,
        fleet: Fleet,
        api: PromApi,
        engines: Sequence[Engine] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = name
        self.interval_s = fleet.refresh_s
        self.api = api
        self._timeout_s = fleet.timeout_s
        self._filtered = bool(fleet.match)
        self._matched = matcher(fleet.match)  # a target's labels: in the fleet
        engines = engines or all_engines()
        queries = [
            up_query(fleet.match),
            *engine_queries(engines, fleet.match, fleet.rate_window),
            restarts_query(engines, fleet.match, RESTART_WINDOW),
            gpu_query(fleet.gpu_match),
        ]
        self._every = [q for q in queries if q.figure not in IN_TURN]  # up first
        self._in_turn = [q for q in queries if q.figure in IN_TURN]
        self._turn = 0  # which of them the last refresh asked
        self._kept: dict[str, Answer] = {}  # the last answers of those asked in turn
        self._hosts = HostMap(fleet.hosts, fleet.host)
        self._clock = clock
        self._lock = asyncio.Lock()
        self._last: FleetSnapshot | None = None
        self._known: dict[str, _Server] = {}  # what each server was last seen as
        self._changed: dict[str, tuple[State, float]] = {}
        self._failures = 0
        self._skip = 0
        self._problem: str | None = None
        self._causes: dict[tuple[str, str], str] = {}  # the scrape errors last asked for
        self._down: frozenset[tuple[str, str]] = frozenset()  # the targets down then
        self._causes_age = 0
        # restarts Prometheus never saw down: key -> (when, exact, the answer's figure)
        self._restarted: dict[str, tuple[float, bool, float]] = {}
        self._steady: set[str] = set()  # up, and not restarted, at an earlier refresh

    @classmethod
    def open(cls, name: str, fleet: Fleet, **kw) -> PrometheusSource:
        """The source of a configured fleet; AuthError when its secret cannot be read."""
        headers, auth = headers_and_auth(fleet)
        api = PromApi(
            fleet.prometheus,
            auth=auth,
            headers=headers,
            ca_file=fleet.ca_file,
            timeout_s=fleet.timeout_s,
        )
        return cls(name, fleet, api, **kw)

    @classmethod
    def for_url(cls, url: str, **kw) -> PrometheusSource:
        """A one-off look at `url` (`sgwatch fleet --prometheus URL`): no matchers, no auth.
        ValueError, one line, for a URL the config would refuse."""
        try:
            fleet = Fleet(prometheus=url)
        except ValidationError as e:
            raise ValueError(e.errors()[0]["msg"].removeprefix("Value error, ")) from None
        return cls.open(url, fleet, **kw)

    @property
    def queries(self) -> tuple[str, ...]:
        """The PromQL of every figure: the first refresh asks them all."""
        return tuple(q.promql for q in (*self._every, *self._in_turn))

    @property
    def per_refresh(self) -> int:
        """How many queries each refresh after the first asks (the targets' errors apart)."""
        return len(self._every) + min(1, len(self._in_turn))

    async def snapshot(self) -> FleetSnapshot:
        async with self._lock:
            if self._skip:
                self._skip -= 1
                return self._stale(self._problem or "no answer")
            try:
                async with asyncio.timeout(self._timeout_s):
                    snap = await self._refresh()
            except (PromError, TimeoutError) as e:
                self._failures += 1
                self._skip = min(2 ** (self._failures - 1) - 1, MAX_SKIP)
                why = str(e) if isinstance(e, PromError) else ""
                self._problem = (
                    why or f"{self.api.base_url}: no answer within {self._timeout_s:g} s"
                )
                return self._stale(self._problem)
            self._failures, self._problem = 0, None
            self._last = snap
            return snap

    async def unscraped(self) -> tuple[str, ...]:
        """The fleet's targets Prometheus found but has not scraped yet (in no answer until
        then, so in no row): asked of the targets' list, by a wait about to say all are up.
        None where the API lists no targets (Thanos, Mimir and VictoriaMetrics may not)."""
        try:
            targets = await self.api.targets()
        except PromError:
            return ()
        jobs = {s.labels.get("job") for s in self._known.values()}

        def ours(labels: dict[str, str]) -> bool:
            if self._filtered:
                return self._matched(labels)
            return labels.get("job") in jobs  # as the rows: a job that served engine series

        return tuple(
            t.labels["instance"]
            for t in targets
            if t.health == "unknown" and t.labels.get("instance") and ours(t.labels)
        )

    async def close(self) -> None:
        await self.api.aclose()

    def _asked(self) -> list[Query]:
        """Every refresh's queries, and of those asked in turn all (until each has
        answered once: the first refresh) or the one whose turn it is."""
        if not self._in_turn or any(q.figure not in self._kept for q in self._in_turn):
            return [*self._every, *self._in_turn]
        self._turn = (self._turn + 1) % len(self._in_turn)
        return [*self._every, self._in_turn[self._turn]]

    async def _refresh(self) -> FleetSnapshot:
        asked = self._asked()
        answers = await asyncio.gather(
            *(self.api.query(q.promql) for q in asked), return_exceptions=True
        )
        up = answers[0]
        if isinstance(up, BaseException):
            raise up if isinstance(up, PromError) else PromError(f"{self.api.base_url}: {up}")
        warnings: list[str] = [w for a in answers if isinstance(a, Answer) for w in a.warnings]
        by_figure: dict[str, Answer] = {}
        for q, a in zip(asked[1:], answers[1:], strict=True):
            if isinstance(a, Answer):
                by_figure[q.figure] = a
                if q.figure in IN_TURN:
                    self._kept[q.figure] = a
            else:  # one asked in turn keeps its last answer
                warnings.append(f"{q.figure}: {a}")
        kept = {f: a for f, a in self._kept.items() if f not in by_figure}
        servers = self._servers(up, by_figure, kept)
        now = self._clock()
        if "restarts" in by_figure:
            self._note_restarts(servers, by_figure["restarts"], now)
        down = frozenset((k, s.labels.get("job", "")) for k, s in servers.items() if s.up == 0)
        try:
            causes = await self._causes_of(down)
        except PromError as e:
            causes = {}
            warnings.append(f"scrape errors: {e}")
        gpus = GpuJoin(by_figure.get("gpu") or kept.get("gpu"))
        rows = tuple(self._row(key, s, causes, gpus, now) for key, s in sorted(servers.items()))
        return FleetSnapshot(rows, now, warnings=tuple(dict.fromkeys(warnings)))

    async def _causes_of(self, down: frozenset[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """The scrape errors of the targets that are down. The targets' list is long (every
        target's labels), so it is asked for only when a target went down since it was
        last asked, or every CAUSES_EVERY refreshes while some are down."""
        self._causes_age += 1
        if not down:
            self._causes, self._down = {}, down
        elif not down <= self._down or self._causes_age >= CAUSES_EVERY:
            self._causes = _causes(await self.api.targets())
            self._down, self._causes_age = down, 0
        return self._causes

    def _servers(
        self, up: Answer, by_figure: dict[str, Answer], kept: dict[str, Answer]
    ) -> dict[str, _Server]:
        """The servers this refresh's answers list, with their figures; those of `kept`
        (earlier answers) fill in the servers listed now, and list none."""
        servers: dict[str, _Server] = {}
        answers = [(f, a, False) for f, a in by_figure.items()]
        for figure, answer, old in [*answers, *((f, a, True) for f, a in kept.items())]:
            if figure in ("gpu", "restarts"):
                continue
            for sample in answer.samples:
                engine = sample.labels.get(ENGINE_LABEL)
                key = sample.labels.get("instance")
                if not key or not engine or (old and key not in servers):
                    continue
                s = servers.setdefault(key, _Server(_plain(sample.labels)))
                s.engine = engine
                model = sample.labels.get(_model_label(engine))
                if model:
                    s.models.add(model)
                if sample.value is not None:
                    s.figures.setdefault(figure, []).append(sample.value)
        jobs = {s.labels.get("job") for s in (*servers.values(), *self._known.values())}
        for sample in up.samples:
            key = sample.labels.get("instance")
            if not key:
                continue
            # Without matchers a target counts if it or its job has served engine series.
            unseen = key not in servers and key not in self._known
            if not self._filtered and unseen and sample.labels.get("job") not in jobs:
                continue
            s = servers.setdefault(key, _Server({}))
            s.labels = {**s.labels, **sample.labels}
            s.up = sample.value
        for key, s in servers.items():
            known = self._known.get(key)
            if known is not None and s.engine is None:  # down: what it was last seen as
                s.engine, s.models = known.engine, known.models
            if s.engine is not None:
                self._known[key] = _Server(s.labels, engine=s.engine, models=set(s.models))
        return servers

    def _note_restarts(self, servers: dict[str, _Server], answer: Answer, now: float) -> None:
        """The restarts the answer lists: when, from the new process's start time; else
        (a counter reset) this refresh, and exact when an earlier refresh saw the server
        steady or fewer resets (the restart came between the two)."""
        found: dict[str, tuple[str, float]] = {}
        for sample in answer.samples:
            key, measure = sample.labels.get("instance"), sample.labels.get(MEASURE_LABEL)
            usable = key and measure and sample.value is not None
            if usable and (measure == "start" or key not in found):  # the start says when
                found[key] = (measure, sample.value)
        for key, s in servers.items():
            if s.up != 1 or key not in found:
                self._restarted.pop(key, None)
                if s.up == 1:
                    self._steady.add(key)
                continue
            measure, value = found[key]
            before = self._restarted.get(key)
            if measure == "start":
                self._restarted[key] = (value, True, value)
            elif before is None or before[2] < value:
                seen = before is not None or key in self._steady  # between two refreshes
                self._restarted[key] = (now, seen, value)
            self._steady.discard(key)

    def _row(
        self,
        key: str,
        s: _Server,
        causes: dict[tuple[str, str], str],
        gpus: GpuJoin,
        now: float,
    ) -> FleetRow:
        figures = {f: (sum(v) if f in ADDITIVE else sum(v) / len(v)) for f, v in s.figures.items()}
        if "kv_pct" in figures:
            figures["kv_pct"] *= 100.0
        detail = ""
        if s.up == 0:
            state: State = "down"
            detail = causes.get((key, s.labels.get("job", ""))) or "not answering its scrape"
            figures = {}  # a rate's window still holds samples from before it went down
        elif figures.get("gen_tok_s", 0) > 0 or figures.get("running", 0) > 0:
            state = "serving"
        else:
            state = "idle"
        restarted = None
        if state != "down" and (told := self._restarted.get(key)) is not None:
            restarted, exact = told[0], told[1]
            when = time.strftime("%H:%M:%S", time.localtime(restarted))
            detail = f"restarted {when}" if exact else f"restarted in the last {RESTART_WINDOW}"
        changed = self._changed_at(key, state, now)
        host = self._hosts.host_of(s.labels)
        return FleetRow(
            key=key,
            instance=key,
            state=state,
            engine=s.engine,
            model=", ".join(sorted(s.models)) or None,
            job=s.labels.get("job"),
            host=host,
            detail=detail,
            changed_at=max(changed, restarted or changed),
            restarted_at=restarted,
            **figures,
            **gpus.figures(key, host),
        )

    def _changed_at(self, key: str, state: State, now: float) -> float:
        before = self._changed.get(key)
        if before is None or before[0] != state:
            self._changed[key] = (state, now)
            return now
        return before[1]

    def _stale(self, problem: str) -> FleetSnapshot:
        rows = self._last.rows if self._last else ()
        stale = tuple(
            dataclasses.replace(r, state="stale", detail=f"last seen {r.state}") for r in rows
        )
        return FleetSnapshot(stale, self._clock(), stale=True, problem=problem)


def _plain(labels: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in labels.items() if k != ENGINE_LABEL}


def _model_label(engine: str) -> str:
    try:
        series = by_name(engine).fleet
    except KeyError:
        return "model_name"
    return series.model_label if series else "model_name"


def _causes(targets: list[Target]) -> dict[tuple[str, str], str]:
    """(instance, job) -> the last scrape error of a target that is down, on one line."""
    return {
        (t.labels.get("instance", ""), t.labels.get("job", "")): short_cause(t.last_error)
        for t in targets
        if t.health == "down" and t.last_error
    }


# What a scrape error says first and the row says already: the request and the address.
_ADDRESSED = re.compile(r'^Get "[^"]*": |dial tcp \S+: (?:connect: )?')


def short_cause(error: str) -> str:
    """A scrape error on one line without the URL and address the row names: Go's
    `Get "http://127.0.0.1:8000/metrics": dial tcp 127.0.0.1:8000: connect: connection
    refused` reads `connection refused`, so that it fits the state cell."""
    return _ADDRESSED.sub("", " ".join(error.split())) or error.strip()
