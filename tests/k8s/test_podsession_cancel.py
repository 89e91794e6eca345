"""A pod session cancelled (the dashboard quitting) in the same moment as a restart's
switch to the new pod ends, and leaves no `kubectl logs -f` behind; taken for the
switch, the cancel was lost and the app's exit waited for ever on the next pod's log."""

from __future__ import annotations

import asyncio
import contextlib
import os

import pytest

from sgwatch.core.podaddress import parse_address
from sgwatch.live.linkstate import LIVE
from sgwatch.live.options import Options
from sgwatch.live.podsession import PodSession
from sgwatch.live.watch import Watch
from tests.k8s.conftest import container, deployment, sim, wait_for

ADDRESS = "k8s://llm/vllm"


def log_follows(cluster) -> list[str]:
    """This cluster's `kubectl logs -f` processes (the stand-in's own path in each)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            if str(cluster.bin) in cmd and " logs -f " in cmd:
                found.append(cmd)
    return found


async def test_a_cancel_that_meets_a_switch_ends_the_session(kube):
    kube.apply(deployment("vllm", container(sim(speed=50))))
    wait_for(kube.pods)
    session = PodSession(Watch(ADDRESS), parse_address(ADDRESS), options=Options(keep_looking=True))
    task = asyncio.create_task(session.run())
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while not (session.watch.link == LIVE and session.server is not None):
        assert loop.time() < deadline, "the pod's log was never followed"
        await asyncio.sleep(0.1)
    assert log_follows(kube)
    session.follow_next(session.server, "replaced")  # a restart's switch ...
    task.cancel()  # ... and the app quitting, in the same moment
    try:
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(task), 20)
    finally:
        task.cancel()  # when the first cancel was lost: the session must not outlive the test
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert not log_follows(kube)
