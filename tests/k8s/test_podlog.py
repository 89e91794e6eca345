"""The pod's log as a source: history first, then followed; a dropped `kubectl logs -f`
resumed from the last line's second (--since-time, which the API server keeps to the
second) with no line lost and none repeated."""

from __future__ import annotations

import asyncio
import subprocess

from sgwatch.core.podaddress import parse_address
from sgwatch.live.podlog import ContainerEnded, PodLog
from sgwatch.remote.logfollow import LogData, LogOpened
from sgwatch.transport.kube import Kubectl
from sgwatch.transport.link import LinkDown, LinkUp
from tests.k8s.conftest import container, deployment, sim, wait_for

READY = b"Application startup complete."


def test_a_dropped_follow_resumes_without_loss_or_repeats(cluster, monkeypatch):
    for key in ("PATH", "KUBECONFIG"):
        monkeypatch.setenv(key, cluster.env[key])
    cluster.apply(deployment("vllm", container(sim(speed=20))))
    pod = wait_for(cluster.pods)[0]["metadata"]["name"]
    wait_for(lambda: cluster.kubectl("logs", "-n", "llm", pod, check=False).stdout.count("\n") > 3)
    (cluster.state / "k8s-drop-logs").write_text("4")  # the first follower drops after 4 lines

    async def follow() -> tuple[bytes, list[object]]:
        got, seen = bytearray(), []
        log = PodLog(Kubectl(parse_address("k8s://llm")), pod, "vllm")
        async for ev in log.events():
            seen.append(type(ev))
            if isinstance(ev, LogData):
                got += ev.data
                assert ev.offset == len(got)
            if READY in got or isinstance(ev, ContainerEnded):
                break
        return bytes(got), seen

    got, seen = asyncio.run(asyncio.wait_for(follow(), 60))
    assert seen[0] is LogOpened and LinkDown in seen and LinkUp in seen
    assert not (cluster.state / "k8s-drop-logs").exists()  # the drop did happen
    whole = subprocess.run(
        ["kubectl", "logs", "-n", "llm", pod], env=cluster.env, capture_output=True, timeout=30
    ).stdout
    assert READY in got
    assert whole.startswith(got)  # every line once, in order
