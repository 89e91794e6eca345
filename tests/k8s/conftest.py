"""A Kubernetes cluster where none can run: the kubectl stand-in
(tests/integration/standins/kubectl) on PATH, its state in the test's tmp folder, a
kubeconfig (JSON) with two contexts, and the pods' containers running the simulator.
Every process the stand-in started (kubelets, controllers, containers) ends with the
test."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.sshd import free_port

STANDINS = Path(__file__).parents[1] / "integration" / "standins"
TOOLS = ("kubectl", "_kube.py", "_kubelet.py", "_standin.py")


def sim(*flags: str, vllm: bool = True, speed: float = 50) -> list[str]:
    """A container's command: the simulated server on the pod's own address, at a port
    free on this machine (a pod's port is its own in a cluster; here they share one)."""
    engine = ["vllm", "serve", "Qwen/Qwen3-8B"] if vllm else ["--model-path", "Qwen/Qwen3-8B"]
    port = str(free_port())
    return [
        sys.executable,
        "-m",
        "sgwatch.sim",
        *engine,
        "--host",
        "$(POD_IP)",
        "--port",
        port,
        "--sim-speed",
        f"{speed:g}",
        *flags,
    ]


def container(command: list[str], name: str = "vllm", **probes: dict) -> dict:
    port = int(command[command.index("--port") + 1])
    return {
        "name": name,
        "image": "vllm/vllm-openai:v0.11.0",
        "command": command[:3],
        "args": command[3:],
        "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
        "ports": [{"name": "http", "containerPort": port}],
        **probes,
    }


def http_probe(period: float = 1, threshold: int = 30, delay: float = 0) -> dict:
    """GET /health on the container's port named `http`."""
    return {
        "httpGet": {"path": "/health", "port": "http"},
        "periodSeconds": period,
        "failureThreshold": threshold,
        "initialDelaySeconds": delay,
    }


def deployment(name: str, c: dict, labels: dict | None = None) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "replicas": 1,
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"terminationGracePeriodSeconds": 2, "containers": [c]},
            },
        },
    }


class Cluster:
    def __init__(self, folder: Path) -> None:
        self.bin = folder / "bin"
        self.bin.mkdir()
        for tool in TOOLS:
            shutil.copy2(STANDINS / tool, self.bin / tool)
        self.state = self.bin / "standin-state"
        self.state.mkdir()
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "kind-kind",
            "contexts": [
                {"name": "kind-kind", "context": {"cluster": "kind-kind", "namespace": "llm"}},
                {"name": "prod", "context": {"cluster": "prod"}},
            ],
        }
        (folder / "kubeconfig").write_text(json.dumps(config))
        self.env = {
            **os.environ,
            "PATH": f"{self.bin}:{os.environ['PATH']}",
            "KUBECONFIG": str(folder / "kubeconfig"),
            "KUBECTL_STANDIN_BACKOFF": "1",
            "XDG_STATE_HOME": str(folder / "state"),
            "XDG_CONFIG_HOME": str(folder / "config"),
            "HOME": str(folder),
        }
        self.folder = folder

    def kubectl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        r = subprocess.run(
            ["kubectl", *args], env=self.env, capture_output=True, text=True, timeout=60
        )
        assert not check or r.returncode == 0, r.stderr
        return r

    def apply(self, *docs: dict) -> None:
        path = self.folder / f"manifest-{time.monotonic_ns()}.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(docs)}))
        self.kubectl("apply", "-n", "llm", "-f", str(path))

    def pods(self) -> list[dict]:
        return json.loads(self.kubectl("get", "pods", "-n", "llm", "-o", "json").stdout)["items"]

    def sgwatch(self, *args: str, timeout: float = 60, stdin=subprocess.DEVNULL):
        return subprocess.run(
            [sys.executable, "-m", "sgwatch", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=stdin,
        )

    def start(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "sgwatch", *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def stop(self) -> None:
        pids = self.state / "k8s-pids"
        for line in pids.read_text().splitlines() if pids.exists() else []:
            pid = json.loads(line)["pid"]
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def wait_for(check, timeout: float = 30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if got := check():
            return got
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s")


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture
def kube(cluster, monkeypatch):
    """The cluster, with this process reaching it as sgwatch would (kubectl on PATH)."""
    for key in ("PATH", "KUBECONFIG", "KUBECTL_STANDIN_BACKOFF", "XDG_STATE_HOME", "HOME"):
        monkeypatch.setenv(key, cluster.env[key])
    return cluster
