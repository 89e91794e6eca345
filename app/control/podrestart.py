"""Restarting a server that runs in a pod: the owner is restarted, never the pod.

Same flags: `kubectl rollout restart` of the Deployment or StatefulSet; a LeaderWorkerSet,
which `rollout restart` does not support, gets the same change by a JSON patch (the
`kubectl.kubernetes.io/restartedAt` annotation on its pod templates). Edited flags: a
JSON patch of the owner's container args (each replace preceded by a `test` of the old
value, so a spec changed meanwhile refuses the patch instead of being overwritten). A
bare pod has no owner to recreate it: refused. An owner that Helm manages, or that
another controller owns, will have the edit undone: warned (docs/design/kubernetes.md).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from dataclasses import dataclass
from typing import Any

from sgwatch.core.cmdline import LaunchCommand
from sgwatch.live.pods import SHELLS, Owner, PodServer, discover_pods, server_argv
from sgwatch.transport.kube import Kubectl

RESTARTABLE = ("Deployment", "StatefulSet", "LeaderWorkerSet")
KIND_WORD = {"Deployment": "deployment", "StatefulSet": "statefulset", "LeaderWorkerSet": "lws"}
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"


class PodRestartRefused(Exception):
    """Nothing was touched: the message says why."""


@dataclass(frozen=True, slots=True)
class Plan:
    owner: Owner
    args: tuple[str, ...]  # kubectl's arguments (after --context, -n)
    shown: str  # the command as shown, the patch included
    warnings: tuple[str, ...]


def templates(kind: str, doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(JSON pointer, pod template) of each template the owner makes pods from."""
    spec = doc["spec"]
    if kind != "LeaderWorkerSet":
        return [("/spec/template", spec["template"])]
    lwt = spec["leaderWorkerTemplate"]
    base = "/spec/leaderWorkerTemplate"
    out = [(f"{base}/workerTemplate", lwt["workerTemplate"])]
    if "leaderTemplate" in lwt:
        out.insert(0, (f"{base}/leaderTemplate", lwt["leaderTemplate"]))
    return out


def warnings(owner: Owner, doc: dict[str, Any]) -> tuple[str, ...]:
    meta = doc.get("metadata", {})
    labels, notes = meta.get("labels", {}), meta.get("annotations", {})
    out = []
    release = notes.get("meta.helm.sh/release-name")
    if labels.get("app.kubernetes.io/managed-by") == "Helm" or release:
        named = f" (release {release})" if release else ""
        out.append(
            f"warning: {owner} is managed by Helm{named}: the next `helm upgrade` puts the "
            "chart's values back; change them there too"
        )
    for ref in meta.get("ownerReferences", []):
        out.append(
            f"warning: {owner} is owned by {ref['kind']}/{ref['name']}, whose controller may "
            "undo this change"
        )
    return tuple(out)


def check_owner(server: PodServer) -> Owner:
    if server.owner is None:
        raise PodRestartRefused(
            f"pod/{server.pod} is a bare pod: nothing would recreate it after a restart "
            "(run it under a Deployment, StatefulSet or LeaderWorkerSet); not touched"
        )
    if server.owner.kind not in RESTARTABLE:
        raise PodRestartRefused(
            f"pod/{server.pod} belongs to {server.owner}: sgwatch restarts a Deployment, "
            "StatefulSet or LeaderWorkerSet; not touched"
        )
    return server.owner


async def plan(kube: Kubectl, server: PodServer, new: LaunchCommand | None) -> Plan:
    """What restarting `server` does (`new`: its edited command; None: the same flags)."""
    owner = check_owner(server)
    word = KIND_WORD[owner.kind]
    doc = await kube.json("get", word, owner.name)
    warned = warnings(owner, doc)
    if new is None and owner.kind != "LeaderWorkerSet":
        args = ("rollout", "restart", f"{word}/{owner.name}")
        return Plan(owner, args, kube.command(*args), warned)
    ops = restart_ops(owner.kind, doc) if new is None else args_ops(owner.kind, doc, server, new)
    patch = json.dumps(ops, separators=(",", ":"))
    args = ("patch", word, owner.name, "--type=json", "-p", patch)
    return Plan(owner, args, kube.command(*args), warned)


def restart_ops(kind: str, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """What `kubectl rollout restart` changes, as a patch: an annotation on each template."""
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    ops = []
    for path, template in templates(kind, doc):
        meta = template.get("metadata") or {}
        if "annotations" in meta:
            key = RESTARTED_AT.replace("~", "~0").replace("/", "~1")
            ops.append({"op": "add", "path": f"{path}/metadata/annotations/{key}", "value": at})
        elif "metadata" in template:
            ops.append(
                {"op": "add", "path": f"{path}/metadata/annotations", "value": {RESTARTED_AT: at}}
            )
        else:
            ops.append(
                {
                    "op": "add",
                    "path": f"{path}/metadata",
                    "value": {"annotations": {RESTARTED_AT: at}},
                }
            )
    return ops


def args_ops(
    kind: str, doc: dict[str, Any], server: PodServer, new: LaunchCommand
) -> list[dict[str, Any]]:
    """The patch that makes the server's container run `new`, in every template that has
    the container running the same server command."""
    ops: list[dict[str, Any]] = []
    for path, template in templates(kind, doc):
        containers = template["spec"]["containers"]
        for i, c in enumerate(containers):
            if c["name"] != server.container or tuple(server_argv(c)) != server.argv:
                continue
            ops += _container_ops(f"{path}/spec/containers/{i}", c, new)
    if not ops:
        raise PodRestartRefused(
            f"{server.owner}: no container {server.container} runs the server's command in "
            "its template (changed since the pod was made?); not touched"
        )
    return ops


def _container_ops(path: str, c: dict[str, Any], new: LaunchCommand) -> list[dict[str, Any]]:
    command, args = list(c.get("command", [])), list(c.get("args", []))
    whole = command + args
    if len(whole) >= 3 and whole[0] in SHELLS and whole[1] == "-c":  # the script is the server
        field, index = ("command", 2) if len(command) > 2 else ("args", 2 - len(command))
        target = f"{path}/{field}/{index}"
        old = whole[2]
        return [
            {"op": "test", "path": target, "value": old},
            {"op": "replace", "path": target, "value": shlex.join(new.argv)},
        ]
    head = len(command) if command else len(server_head(c))
    value = new.argv[head:]
    if new.argv[:head] != (command or server_head(c)):
        raise PodRestartRefused("the edit changes the container's command, not only its args")
    if "args" not in c:
        return [{"op": "add", "path": f"{path}/args", "value": value}]
    return [
        {"op": "test", "path": f"{path}/args", "value": args},
        {"op": "replace", "path": f"{path}/args", "value": value},
    ]


def server_head(c: dict[str, Any]) -> list[str]:
    """The image's entrypoint that server_argv put before the args."""
    return server_argv({**c, "args": []})


async def new_pod(
    kube: Kubectl, owner: Owner, before: dict[str, str | None], timeout: float | None
) -> PodServer | None:
    """The owner's pod that a restart made: one not there `before` (pod -> its start),
    or started since; None when none runs within `timeout`."""
    loop = asyncio.get_running_loop()
    end = None if timeout is None else loop.time() + timeout
    while end is None or loop.time() < end:
        for s in await discover_pods(kube):
            fresh = s.pod not in before or (s.running_since and s.running_since != before[s.pod])
            if s.owner == owner and fresh and s.running_since:
                return s
        await asyncio.sleep(0.5)
    return None
