"""A pod's warmup against its probes' budget, the runs it leaves in the history, and a
startupProbe sized from them.

`ProbeGuard` watches a pod session: each run that reaches ready is recorded in the
history under its workload (with the seconds from the container's start to ready, the
span a startupProbe must allow); while a run warms up, its ETA to ready (core/eta.py,
from those runs) is compared with the probe's budget, and a warning goes in the note
while there is still time. `advice` turns the recorded runs into a YAML block:
p95 of their time to ready × 1.5 (docs/design/kubernetes.md, probe advice).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sgwatch.control.controller import run_identity
from sgwatch.control.experiments import ready_facts
from sgwatch.control.history import History, Run, flag_set
from sgwatch.core import events as ev
from sgwatch.core.cmdline import LaunchCommand, parse
from sgwatch.core.eta import ReadyEta, ready_eta
from sgwatch.core.podaddress import PodAddress
from sgwatch.core.probes import overrun
from sgwatch.core.state import seconds_between
from sgwatch.core.summary import warmup_seconds
from sgwatch.engines import by_name
from sgwatch.live.pods import PodServer
from sgwatch.live.podsession import PodSession
from sgwatch.live.transition import CRASHED, READY, Transition

MARGIN = 1.5  # the advice's budget: this many times the p95 of the recorded warmups
PERIOD_S = 10  # the advised startupProbe's period


class NoWarmups(Exception):
    """No recorded warmup to size a probe from: the message says what to do."""


@dataclass(frozen=True, slots=True)
class ProbeView:
    """What the warmup panel shows of the probe: its budget, and the warning when ready
    is expected after it."""

    kind: str
    budget_s: float
    warning: str | None


def history_for(context: str, address: PodAddress, server: PodServer) -> History:
    """The history of a pod's workload (its pod, for a bare one), whatever address
    reached it: `k8s://CONTEXT/NAMESPACE/WORKLOAD`, CONTEXT resolved (Kubectl.context)."""
    name = server.owner.name if server.owner else server.pod
    return History(f"k8s://{context}/{address.namespace}/{name}")


class ProbeGuard:
    def __init__(self, session: PodSession, clock: Callable[[], float] = time.time) -> None:
        self.session = session
        self._clock = clock
        self._history: History | None = None
        self._recorded: set[tuple[str, int, str]] = set()
        self.report: dict[str, Any] | None = None  # the latest look: budget, elapsed, ETA
        self._unlisten = session.watch.listen(self.look)
        self._unsubscribe = session.watch.subscribe(self._record)

    def close(self) -> None:
        self._unlisten()
        self._unsubscribe()

    @property
    def history(self) -> History | None:
        s, context = self.session.server, self.session.context
        if s is None or context is None:
            return None
        history = history_for(context, self.session.address, s)
        if self._history is None or self._history.host != history.host:
            self._history = history
        return self._history

    def look(self) -> None:
        """Compare the budget with the time spent and the ETA (at each feed; the dashboard
        also asks each second, as a quiet compile prints nothing)."""
        session, w = self.session, self.session.watch
        probe, since = session.probe, session.running_since
        warming = w.caught_up and w.state.state in ev.WARMUP_PHASES
        if w.state.state in (ev.CRASHED, ev.READY, ev.SERVING):
            session.say(warning=None)  # killed or up: the warning is past
        if probe is None or since is None or not warming:
            return
        elapsed = self._clock() - since
        eta = self.eta()
        self.report = {
            "probe": probe.kind,
            "budget_s": probe.budget_s,
            "elapsed_s": round(elapsed, 1),
            "eta_s": None if eta is None else round(eta.seconds, 1),
            "eta_basis": None if eta is None else eta.basis,
            "warning": None if eta is None else overrun(probe, elapsed, eta.seconds),
        }
        if self.report["warning"]:
            session.say(warning="warning: " + self.report["warning"])

    @property
    def view(self) -> ProbeView | None:
        """The probe beside the ETA while the run warms up; None when nothing bounds it."""
        probe = self.session.probe
        if probe is None:
            return None
        warming = self.session.watch.state.state in ev.WARMUP_PHASES
        report = self.report if warming else None
        return ProbeView(probe.kind, probe.budget_s, report and report["warning"])

    def eta(self) -> ReadyEta | None:
        """The run's time left to ready, from the workload's earlier runs."""
        s, server, history = self.session.watch.state, self.session.server, self.history
        if server is None or history is None:
            return None
        spent: dict[str, float] = {}
        for p in s.phases:
            took = p.seconds if p.ended_at is not None else seconds_between(p.started_at, s.now_ts)
            spent[p.name] = spent.get(p.name, 0.0) + (took or 0.0)
        earlier = history.earlier(run_identity(self.session.watch), None)
        return ready_eta(flag_set(parse(list(server.argv))), earlier, spent, s.state)

    def _record(self, t: Transition) -> None:
        """A run's outcome, once, in the workload's history (a past one too: what was
        there when we came counts as a recorded warmup)."""
        server, history = self.session.server, self.history
        if server is None or history is None or t.kind not in (READY, CRASHED):
            return
        key = (server.pod, server.restarts, t.kind)
        if key in self._recorded:
            return
        self._recorded.add(key)
        state = self.session.watch.state
        run_id = history.launched(parse(list(server.argv)), None, None, f"pod/{server.pod}")
        if t.kind == CRASHED:
            history.outcome(run_id, "crashed", note=state.crash.summary if state.crash else "")
            return
        since, ready_at = self.session.running_since, None
        if since is not None and not t.past:
            ready_at = round(self._clock() - since, 1)
        history.outcome(
            run_id,
            "ready",
            warmup_seconds=warmup_seconds(state),
            ready_after_s=ready_at,
            pod=server.pod,
            **ready_facts(state),
            **run_identity(self.session.watch),
        )


@dataclass(frozen=True, slots=True)
class Warmup:
    run: Run
    seconds: float  # from the container's start (else the log's first line) to ready


def warmups(runs: list[Run], model: str | None) -> list[Warmup]:
    """The recorded runs of `model` (any model when unknown) that reached ready."""
    out = []
    for r in runs:
        took = r.extra.get("ready_after_s") or r.warmup_seconds
        if (
            r.outcome == "ready"
            and took
            and (model is None or r.extra.get("model") in (None, model))
        ):
            out.append(Warmup(r, float(took)))
    return out


def p95(values: list[float]) -> float:
    """The nearest-rank 95th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def advise(history: History, server: PodServer, address: PodAddress) -> str:
    """The probe block for `server` from its workload's recorded warmups of its model
    (`sgwatch probe-advice`, the dashboard's key); NoWarmups when there are none."""
    model = by_name(server.engine).model_of(parse(list(server.argv)))
    runs = warmups(history.runs(), model)
    if not runs:
        raise NoWarmups(
            f"{address}: no recorded warmup of {model or 'this server'} yet; follow one to "
            f"ready first (sgwatch wait {address})"
        )
    return advice(server, runs, address)


def advice(server: PodServer, runs: list[Warmup], address: PodAddress) -> str:
    """A startupProbe (and readiness, liveness) block for `server`, sized from `runs`."""
    cmd: LaunchCommand = parse(list(server.argv))
    engine = by_name(server.engine)
    port = probe_port(server) or engine.default_port(cmd)
    top = p95([w.seconds for w in runs])
    budget = top * MARGIN
    threshold = math.ceil(budget / PERIOD_S)
    model = engine.model_of(cmd) or "this model"
    used = "\n".join(
        f"#   {time.strftime('%Y-%m-%d %H:%M', time.gmtime(w.run.time))} "
        f"{w.run.extra.get('pod') or w.run.log or w.run.id}: {w.seconds:.0f} s"
        for w in runs
    )
    n = len(runs)
    return f"""\
# sgwatch probe-advice {address}: {model}, {n} recorded warmup{"s" if n != 1 else ""}
# (container start to ready), p95 {top:.0f} s x {MARGIN:g} = {budget:.0f} s:
{used}
startupProbe:               # holds liveness back until the server is up
  httpGet:
    path: /health
    port: {port}
  periodSeconds: {PERIOD_S}
  failureThreshold: {threshold}       # {threshold} x {PERIOD_S} s = {threshold * PERIOD_S} s
readinessProbe:             # /health answers 200 only once the server can serve: SGLang's
  httpGet:                  # is 503 until its warmup ends; vLLM binds its port before the
    path: /health           # engine is up, so a port check (tcpSocket) passes too early
    port: {port}
  periodSeconds: 5
  failureThreshold: 3
livenessProbe:              # starts once the startupProbe succeeded
  httpGet:
    path: /health
    port: {port}
  periodSeconds: 10
  failureThreshold: 3
"""


def probe_port(server: PodServer) -> int | str | None:
    """The port the container's probes already use."""
    for p in server.probes.values():
        for kind in ("httpGet", "tcpSocket"):
            if kind in p and p[kind].get("port") is not None:
                return p[kind]["port"]
    return None
