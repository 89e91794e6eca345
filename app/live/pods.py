"""Which pods at a Kubernetes address run an SGLang or vLLM server.

`kubectl get pods -o json` lists them; a container's command and args are judged by the
engines registry as a host's process list is (`for_command`), a `sh -c SCRIPT` container
by its script. A LeaderWorkerSet's group (a leader and its workers, the labels
`leaderworkerset.sigs.k8s.io/*`) is one server: the leader, with its workers as members.
Each server knows the workload that owns it (the Deployment behind its ReplicaSet, the
StatefulSet, the LeaderWorkerSet), which a restart acts on (control/podrestart.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from sgwatch.core.cmdline import LaunchError, parse, parse_shell
from sgwatch.engines import for_command
from sgwatch.transport.kube import Kubectl

LWS = "leaderworkerset.sigs.k8s.io/"
PROBES = ("startupProbe", "livenessProbe", "readinessProbe")
SHELLS = ("sh", "bash", "/bin/sh", "/bin/bash")
# Images whose entrypoint is the server (a container that gives only args)
ENTRYPOINTS = {"vllm/vllm-openai": ["vllm", "serve"]}


@dataclass(frozen=True, slots=True)
class Owner:
    kind: str  # Deployment, StatefulSet, LeaderWorkerSet, or another controller's kind
    name: str

    def __str__(self) -> str:
        return f"{self.kind.lower()}/{self.name}"


@dataclass(frozen=True, slots=True)
class PodServer:
    pod: str
    uid: str
    container: str
    index: int  # the container's place in the pod's spec.containers
    engine: str
    argv: tuple[str, ...]  # command + args as the container runs them
    node: str
    phase: str
    restarts: int
    ready: bool
    owner: Owner | None  # None: a bare pod
    probes: dict[str, dict[str, Any]]  # startupProbe, livenessProbe, readinessProbe
    running_since: str | None  # state.running.startedAt
    waiting: str | None  # state.waiting.reason (CrashLoopBackOff)
    last_terminated: dict[str, Any] | None  # lastState.terminated
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    members: tuple[str, ...] = ()  # a LeaderWorkerSet group's worker pods

    def describe(self) -> str:
        """One line: pod, container, node, phase, restarts (and the group's workers)."""
        owner = f" ({self.owner})" if self.owner else " (bare pod)"
        workers = f", workers {', '.join(self.members)}" if self.members else ""
        restarts = f", {self.restarts} restart{'s' if self.restarts != 1 else ''}"
        return (
            f"pod/{self.pod}{owner} container {self.container} [{self.engine}] on {self.node}: "
            f"{self.waiting or self.phase}{restarts}{workers}"
        )


async def discover_pods(kube: Kubectl, selector: str | None = None) -> list[PodServer]:
    """The servers at `kube`'s address (its workload's, or the namespace's), oldest first;
    `selector`: only the pods whose labels it matches (kubectl's -l)."""
    doc = await kube.json("get", "pods", *(["-l", selector] if selector else []))
    servers = [s for pod in doc.get("items", []) for s in _servers(pod)]
    want = kube.address.workload
    if want:
        servers = [s for s in servers if want in (s.pod, s.owner.name if s.owner else None)]
    return _grouped(servers)


def server_argv(container: dict[str, Any]) -> list[str]:
    """What the container runs: its command and args, a shell's script read as a command."""
    argv = [*container.get("command", []), *container.get("args", [])]
    if not container.get("command"):
        image = container.get("image", "").split(":")[0].split("@")[0]
        argv = [*next((e for i, e in ENTRYPOINTS.items() if image.endswith(i)), []), *argv]
    if len(argv) >= 3 and argv[0] in SHELLS and argv[1] == "-c":
        try:
            return parse_shell(argv[2]).argv
        except LaunchError:
            return argv
    return argv


def _engine(argv: list[str]) -> str | None:
    try:
        engine = for_command(parse(argv))
    except LaunchError:
        return None
    return None if engine is None else engine.name


def _servers(pod: dict[str, Any]) -> list[PodServer]:
    meta, spec, status = pod["metadata"], pod.get("spec", {}), pod.get("status", {})
    statuses = {c["name"]: c for c in status.get("containerStatuses", [])}
    out = []
    for i, c in enumerate(spec.get("containers", [])):
        argv = server_argv(c)
        engine = _engine(argv)
        if engine is None:
            continue
        st = statuses.get(c["name"], {})
        state = st.get("state", {})
        out.append(
            PodServer(
                pod=meta["name"],
                uid=meta.get("uid", ""),
                container=c["name"],
                index=i,
                engine=engine,
                argv=tuple(argv),
                node=spec.get("nodeName") or "(unscheduled)",
                phase=status.get("phase", "Pending"),
                restarts=st.get("restartCount", 0),
                ready=bool(st.get("ready")),
                owner=owner_of(meta),
                probes={k: c[k] for k in PROBES if k in c},
                running_since=state.get("running", {}).get("startedAt"),
                waiting=state.get("waiting", {}).get("reason"),
                last_terminated=st.get("lastState", {}).get("terminated"),
                labels=meta.get("labels", {}),
                annotations=meta.get("annotations", {}),
            )
        )
    return out


def owner_of(meta: dict[str, Any]) -> Owner | None:
    """The workload a pod belongs to: the Deployment behind its ReplicaSet (whose name is
    the Deployment's and the pod-template-hash), its StatefulSet, its LeaderWorkerSet."""
    labels = meta.get("labels", {})
    if LWS + "name" in labels:
        return Owner("LeaderWorkerSet", labels[LWS + "name"])
    ref = next((r for r in meta.get("ownerReferences", []) if r.get("controller")), None)
    if ref is None:
        return None
    tail = "-" + labels.get("pod-template-hash", "\0")
    if ref["kind"] == "ReplicaSet" and ref["name"].endswith(tail):
        return Owner("Deployment", ref["name"][: -len(tail)])
    return Owner(ref["kind"], ref["name"])


def _grouped(servers: list[PodServer]) -> list[PodServer]:
    """A LeaderWorkerSet group as one server: its leader, with the workers as members."""
    groups: dict[tuple[str, str], list[str]] = {}
    for s in servers:
        if LWS + "name" in s.labels and s.labels.get(LWS + "worker-index", "0") != "0":
            key = (s.labels[LWS + "name"], s.labels.get(LWS + "group-index", "0"))
            groups.setdefault(key, []).append(s.pod)
    out = []
    for s in servers:
        if LWS + "name" not in s.labels:
            out.append(s)
        elif s.labels.get(LWS + "worker-index", "0") == "0":
            key = (s.labels[LWS + "name"], s.labels.get(LWS + "group-index", "0"))
            out.append(replace(s, members=tuple(groups.get(key, []))))
    return out
