"""The pod's log as a source: history first, then followed; a dropped `kubectl logs -f`
resumed from the last line's second (--since-time, which the API server keeps to the
second) with no line lost and none repeated."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import subprocess
import sys

from sgwatch.core.podaddress import parse_address
from sgwatch.live.podlog import ContainerEnded, PodLog
from sgwatch.remote.logfollow import LogData, LogOpened
from sgwatch.transport.kube import Kubectl
from sgwatch.transport.link import LinkDown, LinkUp
from tests.k8s.conftest import container, deployment, sim, wait_for

READY = b"Application startup complete."
# Slow enough that the warmup outlasts the start of the follow on a loaded machine (at 20
# the pod was ready and quiet, its whole log in the history, before the follow began)
SPEED = 5


def test_a_dropped_follow_resumes_without_loss_or_repeats(cluster, monkeypatch):
    for key in ("PATH", "KUBECONFIG"):
        monkeypatch.setenv(key, cluster.env[key])
    cluster.apply(deployment("vllm", container(sim(speed=SPEED))))
    pod = wait_for(cluster.pods)[0]["metadata"]["name"]
    wait_for(lambda: cluster.kubectl("logs", "-n", "llm", pod, check=False).stdout.count("\n") > 3)
    (cluster.state / "k8s-drop-logs").write_text("4")  # the first follower drops after 4 lines

    async def follow() -> tuple[bytes, list[object]]:
        got, seen = bytearray(), []
        log = PodLog(Kubectl(parse_address("k8s://llm")), pod, "vllm")
        async with contextlib.aclosing(log.events()) as events:
            async for ev in events:
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


def test_a_consumer_that_stops_early_leaves_nothing_to_collect_late(cluster, monkeypatch):
    """Left without closing (a `break`, then the loop ends), the follow still ends its
    `kubectl logs -f` on the loop: nothing is collected after the loop has closed
    (asyncio's "Event loop is closed" from a subprocess transport)."""
    for key in ("PATH", "KUBECONFIG"):
        monkeypatch.setenv(key, cluster.env[key])
    cluster.apply(deployment("vllm", container(sim(speed=SPEED))))
    pod = wait_for(cluster.pods)[0]["metadata"]["name"]

    async def follow() -> bool:
        """True once it broke off while following (past the history)."""
        async for ev in PodLog(Kubectl(parse_address("k8s://llm")), pod, "vllm").events():
            if isinstance(ev, LogData) and ev.offset > len(ev.data):
                return True
        return False

    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    assert asyncio.run(asyncio.wait_for(follow(), 60)), "the container ended before a break"
    gc.collect()
    assert [u.exc_value for u in unraisable] == []
