"""A Kubernetes address's servers as a fleet (`sgwatch fleet k8s://...`): one row per pod.

No Prometheus: each refresh lists the pods (`kubectl get pods`, with the fleet's label
selector), one row per server (a LeaderWorkerSet group is its leader's row), and each
server's container is followed by a PodSession: its row is what the log says (warming
with the phase, capture N/M and ETA; ready; crashed with the cause, a probe's kill named)
with what the pod's status adds (CrashLoopBackOff, restarts, the node). At most
`at_once` containers are followed at a time; the rest queue, first listed first. While
some queue, a server followed to ready gives its place up and keeps its last row until
its container changes. See docs/design/kubernetes.md, "Fleet".
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace

from sgwatch.core.cmdline import LaunchError, parse
from sgwatch.core.podaddress import PodAddress
from sgwatch.engines import by_name
from sgwatch.fleet.follow import AT_ONCE, UP
from sgwatch.fleet.podtail import Guard, Guarding, PodTail, container_of, tail_failed
from sgwatch.fleet.row import FleetRow, State
from sgwatch.fleet.source import FleetSnapshot
from sgwatch.fleet.watched import measured, seen
from sgwatch.live.linkstate import Link
from sgwatch.live.pods import PodServer, discover_pods
from sgwatch.live.podsession import PodSession
from sgwatch.live.watch import Watch
from sgwatch.transport.kube import Kubectl, KubeError

RETRY_S = 30.0  # a session that failed (kubectl refused) is started again after this long
# A pod whose container has not started: still on its way (warming), not refused (down)
STARTING = (None, "ContainerCreating", "PodInitializing")


@dataclass(frozen=True)
class Released:
    """A server followed to ready that gave its place up: its last row, kept until its
    container changes."""

    container: tuple[str, int, str | None]
    row: FleetRow


class PodFleet:
    def __init__(
        self,
        name: str,
        address: PodAddress,
        selector: str | None = None,
        at_once: int = AT_ONCE,
        guard: Guarding | None = None,
        retry_s: float = RETRY_S,
    ) -> None:
        if at_once < 1:
            raise ValueError("at_once must be at least 1")
        self.name = name
        self.address = address
        self.selector = selector
        self.at_once = at_once
        self._guard = guard
        self._retry_s = retry_s
        self._kube = Kubectl(address)
        self._tails: dict[str, PodTail] = {}
        self._queue: list[str] = []
        self._released: dict[str, Released] = {}
        self._shown: dict[str, tuple[State, float]] = {}
        self._last: tuple[FleetRow, ...] = ()

    @property
    def following(self) -> list[str]:
        return [k for k, t in self._tails.items() if not t.ended]

    async def snapshot(self) -> FleetSnapshot:
        try:
            servers = await discover_pods(self._kube, self.selector)
        except KubeError as e:  # the cluster did not answer: the last rows, stale
            rows = tuple(
                replace(r, state="stale", detail=f"last seen {r.state}") for r in self._last
            )
            return FleetSnapshot(rows, fetched_at=time.time(), stale=True, problem=str(e))
        found = {key_of(s): s for s in servers}
        await self._update(found)
        self._last = tuple(self._row(k, s) for k, s in found.items())
        self._shown = {r.key: self._shown[r.key] for r in self._last}
        return FleetSnapshot(self._last, fetched_at=time.time())

    async def settle(self, timeout: float) -> None:
        """Wait (up to `timeout` s) until every followed server's row knows something."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline and not all(t.ended or t.told for t in self._tails.values()):
            await asyncio.sleep(0.05)

    async def unscraped(self) -> tuple[str, ...]:
        return ()  # each pod's row is there from the first refresh

    async def close(self) -> None:
        for key in list(self._tails):
            await self._tails.pop(key).stop()
        self._queue.clear()
        await self._kube.close()

    async def _update(self, found: dict[str, PodServer]) -> None:
        for key in set(self._tails) - set(found):  # the pod is gone
            await self._tails.pop(key).stop()
        self._released = {k: r for k, r in self._released.items() if k in found}
        now = time.monotonic()
        for key, s in found.items():
            if self._due(key, s, now) and key not in self._queue:
                self._queue.append(key)
        self._queue = [k for k in self._queue if k in found]
        if self._queue:  # a server followed to ready makes way for one that waits
            for key in [k for k in self.following if seen(self._tails[k].watch).state in UP]:
                tail = self._tails.pop(key)
                last = self._row(key, found[key], tail)
                last = replace(last, detail=_join(last.detail, "its log no longer followed"))
                self._released[key] = Released(tail.container, last)
                await tail.stop()
        while self._queue and len(self.following) < self.at_once:
            key = self._queue.pop(0)
            if (old := self._tails.pop(key, None)) is not None:
                await old.stop()
            self._released.pop(key, None)
            self._tails[key] = self._follow(found[key])

    def _due(self, key: str, s: PodServer, now: float) -> bool:
        """Whether `s` needs a session started: its container runs (or has ended, in a
        back-off: its log says why) and is not the one followed, or last seen ready; or
        its session failed (kubectl refused) `retry_s` ago."""
        if not s.running_since and not s.restarts:  # nothing started: no log to read
            return False
        if (gone := self._released.get(key)) is not None:
            return gone.container != container_of(s)
        tail = self._tails.get(key)
        if tail is None:
            return True
        if not tail.ended:  # a restarted container's session ends by itself, its cause read
            return False
        if tail.container != container_of(s):
            return bool(s.running_since)  # in a back-off, the crash is the ended session's
        return tail_failed(tail) and now - (tail.ended_at or now) >= self._retry_s

    def _follow(self, s: PodServer) -> PodTail:
        address = replace(self.address, workload=None)  # the namespace: the pod is named
        session = PodSession(Watch(key_of(s)), address, pod=s.pod)
        guard = self._guard(session) if self._guard is not None else None
        return PodTail(session, s, guard)

    def _row(self, key: str, s: PodServer, tail: PodTail | None = None) -> FleetRow:
        tail = tail or self._tails.get(key)
        gone = self._released.get(key)
        if tail is None and gone is not None and gone.container == container_of(s):
            return replace(gone.row, node=s.node)
        row = FleetRow(
            key=key,
            instance=key,
            state="down",
            engine=engine_of(s),
            model=model_of(s),
            job=str(s.owner) if s.owner else "bare pod",
            host=str(PodAddress(self.address.namespace, self.address.context, s.pod)),
            node=s.node,
        )
        state, detail, figures = self._said(key, s, tail)
        figures = {k: v for k, v in figures.items() if v is not None}
        shown = self._shown.get(key)
        at = shown[1] if shown is not None and shown[0] == state else time.time()
        self._shown[key] = (state, at)
        return replace(row, state=state, detail=detail, changed_at=at, **figures)

    def _said(self, key: str, s: PodServer, tail: PodTail | None) -> tuple[State, str, dict]:
        """The row's state, detail and figures: the log's, with what the pod adds."""
        pod = pod_words(s)
        if tail is not None and tail.ended and tail.container != container_of(s):
            tail = None if s.running_since else tail  # a new container, not followed yet
        if tail is None:
            if s.waiting == "CrashLoopBackOff":
                return "crashed", _join(last_exit(s), pod), {}
            if not s.running_since:
                return ("warming" if s.waiting in STARTING else "down"), pod, {}
            place = self._queue.index(key) + 1 if key in self._queue else None
            return "warming", _join(f"queued to follow its log ({place})" if place else "", pod), {}
        said = seen(tail.watch)
        if s.waiting == "CrashLoopBackOff" and said.state != "crashed":
            # the session reads the ended container's log and events: its cause comes next
            return "down", _join(_join(last_exit(s), "reading why it ended"), pod), {}
        state: State | None = said.state
        detail = said.detail
        if state is None:  # connecting, or reading the log's past
            # warming, not the pod's `ready`: a container without a readiness probe is ready
            # as soon as it runs
            link = tail.watch.link
            what = "reading its log so far" if link.kind is Link.LIVE else f"its log: {link}"
            state, detail = "warming", what
        if state == "warming" and (flag := probe_flag(tail.guard)):
            detail = _join(detail, flag)
        if state != "crashed" and tail.session.previous_crash:
            detail = _join(detail, tail.session.previous_crash)
        return state, _join(detail, pod), measured(tail.watch)


def key_of(s: PodServer) -> str:
    return f"{s.pod}/{s.container}"


def engine_of(s: PodServer) -> str:
    """The engine the container's command line runs, as shown before its log says."""
    try:
        return by_name(s.engine).shown_as(parse(list(s.argv)))
    except (LaunchError, KeyError, ValueError):
        return s.engine


def model_of(s: PodServer) -> str | None:
    """The model the container's command line names, before its log says."""
    try:
        return by_name(s.engine).model_of(parse(list(s.argv)))
    except (LaunchError, KeyError, ValueError):
        return None


def pod_words(s: PodServer) -> str:
    """What the pod's status adds: a waiting reason, the restarts, a group's workers."""
    parts = []
    if s.waiting:
        parts.append(s.waiting)
    elif s.phase != "Running":
        parts.append(f"pod {s.phase}")
    if s.restarts:
        parts.append(f"{s.restarts} restart{'s' if s.restarts != 1 else ''}")
    if s.members:
        parts.append(f"group of {len(s.members) + 1} pods")
    return ", ".join(parts)


def last_exit(s: PodServer) -> str:
    t = s.last_terminated or {}
    if not t:
        return ""
    return f"exited {t.get('exitCode', '?')} ({t.get('reason', 'unknown')})"


def probe_flag(guard: Guard | None) -> str | None:
    """`⚠ ready at ~420 s, startup probe allows 300 s`: the warmup will be killed."""
    report = guard.report if guard is not None else None
    if not report or not report.get("warning") or report.get("eta_s") is None:
        return None
    at = report["elapsed_s"] + report["eta_s"]
    return f"⚠ ready at ~{at:.0f} s, {report['probe']} probe allows {report['budget_s']:g} s"


def _join(first: str, second: str) -> str:
    return f"{first}; {second}" if first and second else first or second
