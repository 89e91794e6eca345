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
from tests.integration.sshd import command
from tests.k8s.conftest import container, deployment, sim, wait_for

ADDRESS = "k8s://llm/vllm"


def log_follows(cluster) -> list[str]:
    """This cluster's `kubectl logs -f` processes (the stand-in's own path in each)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            cmd = command(int(pid))
            if str(cluster.bin) in cmd and " logs -f " in cmd:
                found.append(cmd)
    return found


async def reach(check, what: str, timeout: float = 60) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, f"{what}: not within {timeout} s"
        await asyncio.sleep(0.1)


async def test_a_cancel_that_meets_a_switch_ends_the_session(kube):
    kube.apply(deployment("vllm", container(sim(speed=50))))
    wait_for(kube.pods)
    session = PodSession(Watch(ADDRESS), parse_address(ADDRESS), options=Options(keep_looking=True))
    task = asyncio.create_task(session.run())
    # live once the log's past is read; `logs -f` starts after it
    await reach(lambda: session.watch.link == LIVE and log_follows(kube), "the log followed")
    session.follow_next(session.server, "replaced")  # a restart's switch ...
    task.cancel()  # ... and the app quitting, in the same moment
    try:
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(task), 20)
    finally:
        task.cancel()  # when the first cancel was lost: the session must not outlive the test
        with contextlib.suppress(asyncio.CancelledError):
            await task
    # the watchdog ends the command's group: the stand-in's own process a moment after
    await reach(lambda: not log_follows(kube), "no kubectl logs -f left", timeout=10)
