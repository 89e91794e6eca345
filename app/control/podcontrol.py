"""The dashboard's hold on a pod's server: what controller.py's Controller is for a host,
as far as a pod allows.

The flag panel and the warmup panel read it as they read a Controller (`current`,
`engine`, `catalog()`, `preflight()`, `ready_eta()`, `history`, `busy`); what differs:

- a restart acts on the owner (podrestart.py): `plan()` says what it would do, the exact
  kubectl command and patch, with its warnings; `apply()` runs it once confirmed and has
  the session follow the new pod from its start;
- flags are checked against the bundled catalog only: the container's interpreter is not
  reached from here;
- the probe's budget and warning (ProbeGuard) go beside the ETA, and the probe advice
  comes from the workload's recorded warmups.
"""

from __future__ import annotations

import asyncio

from sgwatch.control.history import History, restore
from sgwatch.control.podrestart import Plan, PodRestartRefused, new_pod, plan
from sgwatch.control.probes import ProbeGuard, ProbeView, advise
from sgwatch.control.restart import Preflight, RestartFailed
from sgwatch.core import events as ev
from sgwatch.core.cmdline import LaunchCommand, parse
from sgwatch.core.eta import ReadyEta
from sgwatch.engines import Engine, Problem, Selection, by_name, default
from sgwatch.live.pods import discover_pods
from sgwatch.live.podsession import PodSession
from sgwatch.transport.kube import KubeError

NEW_POD_S = 120.0  # how long a restart's new pod may take to start running
NO_GPUS = "GPUs: not read from pods (nvidia-smi is read over SSH)"


class PodController:
    def __init__(self, session: PodSession) -> None:
        self.session = session
        self.guard = ProbeGuard(session)
        self.busy = False  # a restart is being applied: a second one is refused
        self.bench = None  # the bench reaches a server over SSH: none on pods
        self._selection: Selection | None = None
        session.watch.gpu_note = NO_GPUS

    def close(self) -> None:
        self.guard.close()

    @property
    def history(self) -> History:
        return self.guard.history or History(self.session.watch.label)

    @property
    def current(self) -> LaunchCommand | None:
        server = self.session.server
        return None if server is None else parse(list(server.argv))

    @property
    def engine(self) -> Engine:
        server = self.session.server
        return by_name(server.engine) if server is not None else default()

    @property
    def reference_warmup_s(self) -> float | None:
        return None  # the ETA below says it, from the workload's recorded runs

    def ready_eta(self) -> ReadyEta | None:
        if self.session.watch.state.state not in ev.WARMUP_PHASES:
            return None
        return self.guard.eta()

    async def keep_probe_fresh(self, every: float = 1.0) -> None:
        """Forever (cancel it): the probe's warning counts down while the log is quiet."""
        while True:
            await asyncio.sleep(every)
            self.guard.look()

    @property
    def probe(self) -> ProbeView | None:
        return self.guard.view

    def advice(self) -> str:
        """The startupProbe block from the recorded warmups (NoWarmups: none yet)."""
        server, history = self.session.server, self.guard.history
        if server is None or history is None:
            raise RestartFailed("advice", "no pod followed yet: nothing to size a probe for")
        return advise(history, server, self.session.address)

    async def catalog(self) -> Selection:
        if self._selection is None:
            cmd = self.current
            version = self.engine.command_version(cmd) if cmd else None
            self._selection = self.engine.select_catalog(None, version)
        return self._selection

    async def server_settings(self) -> dict:
        return {}  # /server_info is reached over SSH on a host

    async def preflight(self, new: LaunchCommand) -> Preflight:
        catalog = (await self.catalog()).catalog
        problems = self.engine.check(catalog, new)
        return Preflight(problems, f"the flag catalog ({catalog.engine} {catalog.version or '?'})")

    def rollback_target(self) -> LaunchCommand:
        current, run = self.current, self.history.last_good()
        if run is None or current is None:
            raise RestartFailed("rollback", "no earlier command of this workload reached ready")
        try:
            cmd = restore(run.command, current)
        except ValueError as e:
            raise RestartFailed("rollback", str(e)) from None
        if cmd.argv == current.argv:
            raise RestartFailed("rollback", "the pod already runs the last good command")
        return cmd

    async def plan(self, new: LaunchCommand) -> tuple[Plan, list[Problem]]:
        """What restarting with `new` does (the same flags: a rollout restart), and its
        warnings (Helm, another controller) as the confirmation shows them.
        RestartFailed: refused (a bare pod, an owner sgwatch does not restart)."""
        server = self.session.server
        if server is None:
            raise RestartFailed("target", "no pod followed yet")
        same = self.current is not None and new.argv == self.current.argv
        try:
            step = await plan(self.session.kube, server, None if same else new)
        except (PodRestartRefused, KubeError) as e:
            raise RestartFailed("target", str(e)) from None
        return step, [Problem("", "warning", w.removeprefix("warning: ")) for w in step.warnings]

    async def apply(self, step: Plan) -> str:
        """Run the planned kubectl command and follow the owner's new pod from its start;
        the new pod's name. RestartFailed says why not."""
        if self.busy:
            raise RestartFailed("busy", "a restart is already in progress")
        kube = self.session.kube
        self.busy = True
        try:
            before = {s.pod: s.running_since for s in await discover_pods(kube)}
            await kube.check(*step.args)
            nxt = await new_pod(kube, step.owner, before, NEW_POD_S)
        except KubeError as e:
            raise RestartFailed("kubectl", str(e)) from None
        finally:
            self.busy = False
        if nxt is None:
            raise RestartFailed("follow", f"no new pod of {step.owner} within {NEW_POD_S:g} s")
        verb = "rolled out" if step.args[0] == "rollout" else "patched"
        self.session.follow_next(nxt, f"replaced: {step.owner} {verb}, pod {nxt.pod} follows")
        return nxt.pod
