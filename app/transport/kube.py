"""kubectl, run on this machine, as the way to a Kubernetes address's pods.

The kubectl CLI is the client on purpose: it reads the user's kubeconfig, contexts and
exec credential plugins (EKS, GKE, OIDC) exactly as the user's own kubectl does, so
whatever `kubectl get pods` reaches, sgwatch reaches, with nothing else to configure
(docs/design/kubernetes.md). Commands run through LocalTransport: a stream (`logs -f`)
ends when it is closed or sgwatch dies.

    kube = Kubectl(parse_address("k8s://ctx/llm/vllm"))
    pods = await kube.json("get", "pods")         # the -o json document
    stream = await kube.stream("logs", "-f", ...)
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from sgwatch.core.podaddress import PodAddress
from sgwatch.transport.base import RunResult, Stream
from sgwatch.transport.errors import TransportError
from sgwatch.transport.local import LocalTransport

KUBECTL = "kubectl"
NOT_FOUND = 127  # the shell's status for a command it cannot find
# What kubectl prints when the API server cannot be reached (its address, TLS, a token
# its exec plugin could not get): the cluster is unreachable, not the request wrong.
_UNREACHABLE = (
    "Unable to connect to the server",
    "The connection to the server",
    "couldn't get current server API group list",
    "getting credentials: exec",
    'error: context "',  # the kubeconfig has no such context
    "current-context is not set",
)


class KubeError(TransportError):
    """kubectl refused or failed: its own first line says why."""


class KubeUnreachable(KubeError):
    """The cluster's API server could not be reached (or kubectl is not installed)."""


class Kubectl:
    def __init__(self, address: PodAddress) -> None:
        self.address = address
        self.label = str(address)
        self._local = LocalTransport(self.label)

    def command(self, *args: str) -> str:
        """The command line as a shell runs it (and as shown to the user)."""
        return shlex.join([KUBECTL, *self.address.kubectl_flags(), *args])

    async def run(self, *args: str, timeout: float | None = 30.0) -> RunResult:
        return await self._local.run(self.command(*args), timeout=timeout)

    async def check(self, *args: str, timeout: float | None = 30.0) -> str:
        """kubectl's output; KubeError (KubeUnreachable) with its reason when it fails."""
        r = await self.run(*args, timeout=timeout)
        if not r.ok:
            raise failure(self.label, r.exit_status, r.stderr.decode("utf-8", "replace"))
        return r.stdout.decode("utf-8", "replace")

    async def json(self, *args: str) -> Any:
        text = await self.check(*args, "-o", "json")
        try:
            return json.loads(text)
        except ValueError as e:
            raise KubeError(f"{self.label}: kubectl printed no JSON ({e})") from None

    async def context(self) -> str:
        """The context the address uses: its own, else the kubeconfig's current one."""
        if self.address.context:
            return self.address.context
        return (await self.check("config", "current-context")).strip()

    async def stream(self, *args: str) -> Stream:
        return await self._local.stream(self.command(*args))

    async def close(self) -> None:
        await self._local.close()


def failure(label: str, status: int | None, stderr: str) -> KubeError:
    """The error for a kubectl that exited `status` saying `stderr`."""
    first = next((line.strip() for line in stderr.splitlines() if line.strip()), "")
    if status == NOT_FOUND:
        return KubeUnreachable(f"{label}: kubectl not found on PATH (sgwatch reaches pods with it)")
    if any(mark in stderr for mark in _UNREACHABLE):
        return KubeUnreachable(f"{label}: cluster unreachable: {first}")
    return KubeError(f"{label}: {first or f'kubectl exited {status}'}")
