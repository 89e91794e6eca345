"""The commands on a Kubernetes address (`k8s://[CONTEXT/]NAMESPACE[/WORKLOAD]`, or a
`[hosts.NAME]` whose `kubernetes` key names one): `wait`, `events` and `restart` as for
an SSH host, with the same exit statuses, and two of their own:

    sgwatch pods ADDRESS [--json]     the servers there: pod, container, node, phase, restarts
    sgwatch probe-advice ADDRESS      a startupProbe sized from the recorded warmups
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from sgwatch.cli import exitcodes
from sgwatch.cli.args import connection_args
from sgwatch.config import Config, ConfigError, load_config_arg
from sgwatch.control.edits import apply_edits
from sgwatch.control.podrestart import Plan, PodRestartRefused, new_pod, plan
from sgwatch.control.probes import NoWarmups, ProbeGuard, advise, history_for
from sgwatch.core.cmdline import LaunchError, masked, parse
from sgwatch.core.podaddress import PodAddress, is_pod_address, parse_address
from sgwatch.engines import by_name
from sgwatch.live import follow as following
from sgwatch.live.options import Options
from sgwatch.live.pods import PodServer, discover_pods
from sgwatch.live.podsession import PodSession
from sgwatch.live.records import Event, utc_now
from sgwatch.live.watch import Watch
from sgwatch.transport.kube import Kubectl, KubeError, KubeUnreachable


@dataclass(frozen=True, slots=True)
class Shared:
    progress_lines: Callable[[float], Callable[[Event], None]]
    exit_status: Callable[[str, Any], int]


def pod_address(host: str, config: Config) -> PodAddress | None:
    """The Kubernetes address `host` names (itself, or its profile's `kubernetes`); None
    for an SSH host. ValueError: an address that is not one."""
    if is_pod_address(host):
        return parse_address(host)
    given = config.host(host).kubernetes
    return None if given is None else parse_address(given)


def pod_session(host: str, address: PodAddress, command: str, since_now: bool) -> PodSession:
    """The session `wait` (stops at a container's end) or `events` (follows the next)
    runs, with its probe guard (session.guard)."""
    session = PodSession(
        Watch(host), address, options=Options(since_now=since_now), follow_on=command != "wait"
    )
    session.guard = ProbeGuard(session)  # type: ignore[attr-defined]
    return session


def probe_events(session: object, emit: Callable[[Event], None]) -> Callable[[Event], None]:
    """`emit`, with a `probe` event whenever a pod's budget or its warning changes (an SSH
    host's session: `emit` as it is)."""
    if not isinstance(session, PodSession):
        return emit
    said: list[object] = [None]

    def emit_too(event: Event) -> None:
        emit(event)
        report = session.guard.report  # type: ignore[attr-defined]
        key = None if report is None else (report["budget_s"], report["warning"])
        if key is not None and key != said[0]:
            said[0] = key
            emit({"event": "probe", "host": session.watch.label, "time": utc_now(), **report})

    return emit_too


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = exitcodes.add_command(
        sub,
        "pods",
        help="the SGLang and vLLM servers at a Kubernetes address",
        description="List the pods at ADDRESS whose containers run an SGLang or vLLM server "
        "(by their command and args): container, node, phase, restarts; a LeaderWorkerSet "
        "group is one server, its leader, with its workers. kubectl reaches the cluster "
        "with your kubeconfig and context.",
    )
    p.add_argument("address", metavar="ADDRESS", help="k8s://[CONTEXT/]NAMESPACE[/WORKLOAD]")
    p.add_argument("--json", action="store_true", help="one JSON object per server")
    connection_args(p)
    a = exitcodes.add_command(
        sub,
        "probe-advice",
        help="a startupProbe sized from this workload's recorded warmups",
        description="Print startupProbe, readinessProbe and livenessProbe YAML for the server "
        "at ADDRESS: the startup budget is the p95 of the recorded times from container start "
        "to ready (runs `wait`, `events` and the dashboard saw), times 1.5, naming the runs "
        "used. No recorded warmup yet: exit 4.",
    )
    a.add_argument("address", metavar="ADDRESS", help="k8s://[CONTEXT/]NAMESPACE[/WORKLOAD]")
    connection_args(a)


def _address(text: str, config_arg: str | None) -> PodAddress | None:
    try:
        address = pod_address(text, load_config_arg(config_arg))
    except (ConfigError, ValueError) as e:
        print(e, file=sys.stderr)
        return None
    if address is None:
        print(
            f"{text}: not a Kubernetes address (k8s://[CONTEXT/]NAMESPACE[/WORKLOAD])",
            file=sys.stderr,
        )
    return address


def run_pods(args: argparse.Namespace) -> int:
    address = _address(args.address, args.config)
    if address is None:
        return exitcodes.USAGE
    try:
        servers = asyncio.run(discover_pods(Kubectl(address)))
    except KubeError as e:
        print(e, file=sys.stderr)
        return exitcodes.UNREACHABLE if isinstance(e, KubeUnreachable) else exitcodes.FAILED
    for s in servers:
        if args.json:
            print(json.dumps(_as_json(s)), flush=True)
        else:
            print(s.describe())
    if not servers:
        print(f"{address}: no pod runs an SGLang or vLLM server", file=sys.stderr)
        return exitcodes.NO_SERVER
    return exitcodes.OK


def _as_json(s: PodServer) -> dict[str, object]:
    return {
        "pod": s.pod,
        "container": s.container,
        "engine": s.engine,
        "node": s.node,
        "phase": s.phase,
        "waiting": s.waiting,
        "restarts": s.restarts,
        "ready": s.ready,
        "owner": str(s.owner) if s.owner else None,
        "workers": list(s.members),
        "command": masked(parse(list(s.argv))).argv,
    }


def run_probe_advice(args: argparse.Namespace) -> int:
    address = _address(args.address, args.config)
    if address is None:
        return exitcodes.USAGE
    kube = Kubectl(address)
    try:
        servers = asyncio.run(discover_pods(kube))
        context = asyncio.run(kube.context())
    except KubeError as e:
        print(e, file=sys.stderr)
        return exitcodes.UNREACHABLE if isinstance(e, KubeUnreachable) else exitcodes.FAILED
    if len({(s.owner or s.pod) for s in servers}) > 1:
        names = ", ".join(sorted({str(s.owner or s.pod) for s in servers}))
        print(f"{address}: several workloads ({names}); name one", file=sys.stderr)
        return exitcodes.AMBIGUOUS
    if not servers:
        print(f"{address}: no pod runs an SGLang or vLLM server", file=sys.stderr)
        return exitcodes.NO_SERVER
    server = servers[-1]
    try:
        print(advise(history_for(context, address, server), server, address), end="")
    except NoWarmups as e:
        print(e, file=sys.stderr)
        return exitcodes.NO_SERVER
    return exitcodes.OK


def run_pod_restart(
    args: argparse.Namespace, address: PodAddress, ask: Callable[[str], bool], shared: Shared
) -> int:
    """`restart` on pods; `shared`: what it shares with the SSH host's restart (how it
    prints progress, and the exit status of how following ended)."""
    try:
        return asyncio.run(_restart(args, address, ask, shared))
    except KeyboardInterrupt:
        return exitcodes.INTERRUPTED


async def _restart(
    args: argparse.Namespace, address: PodAddress, ask: Callable[[str], bool], shared: Shared
) -> int:
    say = partial(print, flush=True)
    kube = Kubectl(address)
    try:
        servers = await discover_pods(kube)
        if not servers:
            print(f"{address}: no pod runs an SGLang or vLLM server", file=sys.stderr)
            return exitcodes.NO_SERVER
        owners = {s.owner or s.pod for s in servers}
        if len(owners) > 1:
            names = ", ".join(sorted(str(o) for o in owners))
            print(f"{address}: several workloads ({names}); name one", file=sys.stderr)
            return exitcodes.AMBIGUOUS
        server = servers[-1]
        edits = (args.enable, args.disable, args.set, args.unset)
        new = None
        if any(edits):
            engine = by_name(server.engine)
            old = parse(list(server.argv))
            catalog = engine.select_catalog(None, engine.command_version(old)).catalog
            new = apply_edits(
                old,
                catalog,
                enable=args.enable,
                disable=args.disable,
                set_values=args.set,
                unset=args.unset,
            )
            say(f"command: {masked(new).shell}")
        step: Plan = await plan(kube, server, new)
    except (PodRestartRefused, LaunchError) as e:
        print(f"sgwatch restart: {e}", file=sys.stderr)
        return exitcodes.REFUSED
    except KubeError as e:
        print(e, file=sys.stderr)
        return exitcodes.UNREACHABLE if isinstance(e, KubeUnreachable) else exitcodes.FAILED
    for w in step.warnings:
        print(w, file=sys.stderr)
    say(f"kubectl: {step.shown}")
    question = f"{'patch' if new is not None else 'restart'} {step.owner} at {address}? [y/N] "
    if not args.yes and not ask(question):
        say("not restarted")
        return exitcodes.REFUSED
    before = {s.pod: s.running_since for s in servers}
    try:
        say((await kube.check(*step.args)).strip())
        nxt = await new_pod(kube, step.owner, before, args.timeout)
    except KubeError as e:
        print(f"restart failed: {e}", file=sys.stderr)
        return exitcodes.FAILED
    if nxt is None:
        print(f"timed out waiting for {step.owner}'s new pod", file=sys.stderr)
        return exitcodes.TIMED_OUT
    say(f"following pod/{nxt.pod}")
    run = pod_session(args.host, address, "wait", since_now=False)
    run.pod = nxt.pod
    emit = shared.progress_lines(args.every)
    outcome = await following.follow(run, "ready", args.timeout, emit)
    run.guard.close()  # type: ignore[attr-defined]
    if outcome == following.READY and step.owner.kind != "LeaderWorkerSet":
        word = step.args[2].split("/")[0] if step.args[0] == "rollout" else step.args[1]
        status = await kube.run(
            "rollout", "status", f"{word}/{step.owner.name}", "--timeout=60s", timeout=90
        )
        last = status.stdout.decode().strip().splitlines()
        say(last[-1] if last else status.stderr.decode().strip())
    return shared.exit_status(outcome, run)
