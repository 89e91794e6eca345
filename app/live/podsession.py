"""One watched Kubernetes address: find its server's pod, follow its container's log,
and say why the kubelet ended a container.

The same contract as session.py's Session for `follow()`, the headless commands and the
restart: `run()`, `watch`, `unfollowed`. What differs is the way in (kubectl, pods.py),
the source (podlog.py) and what the cluster adds: the probes' budget, the previous
container's crash when the kubelet restarted it (kept in the note, so it stays on screen
and `wait` prints it), and the cause of a container's end from its last state and the
pod's events, a probe's kill named as such rather than as the Python error it raises
(`KeyboardInterrupt: terminated`). A container restarted by the kubelet, or a pod
replaced by a rollout, is followed on as a new run.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from sgwatch.core import events as ev
from sgwatch.core.podaddress import PodAddress
from sgwatch.core.probes import TERMINATED_LINE, Probe, kill_cause, read_probes, warmup_probe
from sgwatch.live import linkstate
from sgwatch.live.backlog import Backlog
from sgwatch.live.choice import Unfollowed
from sgwatch.live.ingest import LogIngest
from sgwatch.live.options import DEFAULTS, Options
from sgwatch.live.podlog import ContainerEnded, PodLog
from sgwatch.live.pods import PodServer, discover_pods
from sgwatch.live.watch import Watch
from sgwatch.remote.logfollow import LogData, LogOpened
from sgwatch.transport.kube import Kubectl, KubeError
from sgwatch.transport.link import LinkDown, LinkUp

SETTLE_S = 10.0  # how long the kubelet gets to report a container's end in its status


class PodSession:
    def __init__(
        self,
        watch: Watch,
        address: PodAddress,
        pod: str | None = None,
        options: Options = DEFAULTS,
        follow_on: bool = False,
    ) -> None:
        self.watch = watch
        self.address = address
        self.kube = Kubectl(address)
        self.pod = pod  # a pod named (the command's --pod), else the address's one server
        self.options = options
        # After a container's end, follow its successor (events, the dashboard) rather
        # than stop there (wait: the end is its outcome).
        self.follow_on = follow_on or options.keep_looking
        self.unfollowed: Unfollowed | None = None
        self.server: PodServer | None = None
        self.probes: dict[str, Probe] = {}
        self.running_since: float | None = None  # the followed container's start (epoch s)
        self.previous_crash: str | None = None  # why the container before it ended
        self.context = address.context  # the kubeconfig's current one when not given
        self._notes: dict[str, str] = {}  # the note's parts, by topic, in order
        # A pod to follow at once instead of the one followed (a restart made it), and why
        self._next: tuple[PodServer, str] | None = None
        self._reading: asyncio.Task[None] | None = None

    @property
    def probe(self) -> Probe | None:
        """The probe that bounds the warmup (startup, else liveness)."""
        return warmup_probe(self.probes)

    def say(self, **parts: str | None) -> None:
        """Set (None: clear) parts of the note by topic; they show joined, in order."""
        for topic, text in parts.items():
            if text:
                self._notes[topic] = text
            else:
                self._notes.pop(topic, None)
        self.watch.note = "; ".join(self._notes.values())

    async def servers(self) -> list[PodServer]:
        found = await discover_pods(self.kube)
        return [s for s in found if self.pod in (None, s.pod)]

    async def run(self) -> None:
        w = self.watch
        try:
            self.context = await self.kube.context()
            server = await self._choose()
        except KubeError as e:
            w.link, w.note = linkstate.FAILED, str(e)
            return
        if server is None:
            return
        try:
            while server is not None:
                server = await self._follow(server)
        except KubeError as e:
            w.link, w.note = linkstate.FAILED, str(e)
        finally:
            await self.kube.close()

    async def _choose(self) -> PodServer | None:
        w, every = self.watch, self.options.check_every
        while True:
            servers = await self.servers()
            if len(servers) == 1:
                return servers[0]
            if len(servers) > 1:
                self.unfollowed = Unfollowed.AMBIGUOUS
                names = ", ".join(s.pod for s in servers)
                w.link = linkstate.FAILED
                w.note = f"{self.address}: several servers ({names}); name one: {self.address}/POD"
                return None
            what = f"pod {self.pod}" if self.pod else "pod"
            nothing = f"{self.address}: no {what} runs an SGLang or vLLM server"
            if not (self.options.since_now or self.options.keep_looking):
                self.unfollowed = Unfollowed.NO_SERVER
                w.link, w.note = linkstate.FAILED, nothing
                return None
            w.link, w.note = linkstate.NO_SERVER, f"{nothing}; looking again every {every:g} s"
            await asyncio.sleep(every)

    async def _follow(self, s: PodServer) -> PodServer | None:
        """Follow `s`'s container until it ends; the server to follow next (the same pod's
        restarted container, or the workload's new pod), None when there is none."""
        w = self.watch
        self.server, self.pod = s, s.pod
        self.probes = read_probes(s.probes)
        w.source = f"{self.address} pod/{s.pod} container {s.container} on {s.node}"
        probe = self.probe.describe() if self.probe else None
        self.say(pod=s.describe(), probe=probe, warning=None, previous=None)
        self.running_since = _epoch(s.running_since)
        instance = s.restarts - (0 if s.running_since else 1)  # in a back-off: the one that ended
        if s.running_since and s.restarts and s.last_terminated:
            await self._previous(s)
        log = PodLog(self.kube, s.pod, s.container)
        self._reading = asyncio.ensure_future(self._read(log, Backlog(w, self.options.split_from)))
        try:
            await self._reading
        except asyncio.CancelledError:
            # A switch cancels the reading alone. The session cancelled (the app quitting)
            # is no switch, also when one came in the same moment: taken for one, the
            # cancel would be lost and the next pod's reading awaited for ever.
            itself = asyncio.current_task().cancelling()
            if itself or self._next is None or not self._reading.cancelled():
                raise
        if self._next is not None:
            return self._take_next()
        ended = await self._ended(s, instance)
        if ended is None or ended.pod != s.pod:  # the pod is gone (deleted, replaced)
            nxt = await self._successor(s)
            if nxt is not None:
                w.new_file(f"left: pod {s.pod} is gone; {nxt.pod} replaces it")
            return nxt
        self._crashed(await self._cause(ended), ended)
        if not self.follow_on:
            if w.state.crash is None:
                w.link = linkstate.ENDED
            return None
        nxt = await self._restarted(s, instance)
        if nxt is not None:
            w.new_file(f"restarted by the kubelet (restart {nxt.restarts})")
        return nxt

    def follow_next(self, server: PodServer, why: str) -> None:
        """Leave the followed container for `server` now (a restart's new pod): its
        warmup is followed from its start, not once the old pod is gone."""
        self._next = (server, why)
        if self._reading is not None and not self._reading.done():
            self._reading.cancel()

    def _take_next(self) -> PodServer:
        """The pod follow_next named, its run read from its start."""
        assert self._next is not None
        (nxt, why), self._next = self._next, None
        self.watch.new_file(why)
        return nxt

    async def _read(self, log: PodLog, backlog: Backlog) -> None:
        w = self.watch
        async with contextlib.aclosing(log.events()) as events:
            async for e in events:
                if isinstance(e, LogData):
                    if TERMINATED_LINE.encode() in e.data:  # a SIGTERM: the probe's, maybe
                        await self._killed_now()
                    await backlog.feed(e.data, e.offset)
                elif isinstance(e, LogOpened):
                    backlog.opened(e)
                    w.link = linkstate.LIVE
                elif isinstance(e, LinkDown):
                    w.link = linkstate.stale(e.reason)
                elif isinstance(e, LinkUp):
                    w.link = linkstate.LIVE
                elif isinstance(e, ContainerEnded):
                    break
        backlog.close()
        w.end()

    async def _previous(self, s: PodServer) -> None:
        """The container before this one: why it ended, kept in the note."""
        try:
            past = await PodLog(self.kube, s.pod, s.container).previous()
        except KubeError:
            past = b""
        ingest = LogIngest()
        ingest.feed(past)
        ingest.flush()
        crash = ingest.state.crash
        cause = kill_cause(s.last_terminated, await self._events(s.pod), self.probe)
        code = (s.last_terminated or {}).get("exitCode")
        why = cause or (crash.summary if crash else f"exited {code}")
        self.previous_crash = f"the previous container (restart {s.restarts}) {_verb(why)}"
        self.say(previous=self.previous_crash)

    async def _events(self, pod: str) -> list[dict[str, Any]]:
        doc = await self.kube.json(
            "get", "events", "--field-selector", f"involvedObject.name={pod}"
        )
        return doc.get("items", [])

    async def _killed_now(self) -> None:
        """The log says a SIGTERM ended the server: if a probe's failures sent it, say so
        before the log's own exception line can be taken for the cause."""
        s = self.server
        if s is None:
            return
        cause = kill_cause(None, await self._events(s.pod), self.probe)
        if cause is not None and "probe" in cause:
            self._crashed(self._with_times(cause), s)

    def _with_times(self, cause: str) -> str:
        """A probe's kill named now, while the container still ends: the time it ran."""
        if self.running_since is None:
            return cause
        ran = time.time() - self.running_since
        budget = f" (budget {self.probe.budget_s:g} s)" if self.probe else ""
        return cause.replace(budget, "") + f" after {ran:.0f} s{budget}"

    async def _ended(self, s: PodServer, instance: int) -> PodServer | None:
        """The pod once the kubelet reports the followed container's end; None: gone."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SETTLE_S
        while True:
            now = next((x for x in await self.servers() if x.pod == s.pod), None)
            if now is None or now.restarts > instance or not now.running_since:
                return now
            if loop.time() > deadline:
                return now
            await asyncio.sleep(0.2)

    async def _cause(self, s: PodServer) -> str:
        t = s.last_terminated or {}
        cause = kill_cause(t, await self._events(s.pod), self.probe)
        return cause or f"exited {t.get('exitCode', '?')} ({t.get('reason', 'unknown')})"

    def _crashed(self, cause: str, s: PodServer) -> None:
        """The container's end as the run's crash. The kubelet's account (a probe, a kill)
        replaces what the log said; a bare exit status only says something when the log
        did not."""
        w = self.watch
        state = w.state
        killed = "probe" in cause or "killed" in cause or "terminated" in cause
        if state.crash is not None and not killed:
            return
        if state.state == ev.STOPPED and not killed:
            return
        code = (s.last_terminated or {}).get("exitCode")
        state.apply(
            ev.Crash(
                ts=state.now_ts,
                rank=None,
                summary=cause,
                line="",
                specific=True,
                exit_code=code,
                explained=True,
            )
        )
        w.feed(b"")

    async def _restarted(self, s: PodServer, instance: int) -> PodServer | None:
        """The same pod's next container, once the kubelet has started it (its back-off
        over); None when the pod went instead."""
        while True:
            if self._next is not None:  # a restart made a new pod meanwhile
                return self._take_next()
            now = next((x for x in await self.servers() if x.pod == s.pod), None)
            if now is None:
                return await self._successor(s)
            if now.restarts > instance and now.running_since:
                return now
            await asyncio.sleep(0.5)

    async def _successor(self, s: PodServer) -> PodServer | None:
        """A rollout's new pod of the same workload (a bare pod has none)."""
        if s.owner is None:
            return None
        while True:
            if self._next is not None:
                return self._take_next()
            found = await discover_pods(self.kube)
            new = [x for x in found if x.owner == s.owner and x.pod != s.pod and x.running_since]
            if new:
                return new[-1]
            await asyncio.sleep(0.5)


def _verb(cause: str) -> str:
    """A cause read after 'the container': 'was killed by ...', 'crashed: ...'."""
    if cause.startswith(("killed", "terminated")):
        return f"was {cause}"
    if cause.startswith("exited"):
        return cause
    return f"crashed: {cause}"


def _epoch(stamp: str | None) -> float | None:
    from datetime import datetime

    if not stamp:
        return None
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
