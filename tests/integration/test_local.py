"""`localhost` and the demo: the same Transport over local processes."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from contextlib import aclosing
from pathlib import Path

import pytest

from sgwatch.engines import process_patterns
from sgwatch.remote.discover import discover
from sgwatch.remote.logfollow import LogData, LogFollower
from sgwatch.transport.factory import transport_for
from sgwatch.transport.link import Link
from sgwatch.transport.local import LocalTransport
from sgwatch.transport.ssh import SshTransport
from tests.integration.detached import detached
from tests.integration.helpers import arun, until, wait_until
from tests.integration.sshd import alive, processes_with_env
from tests.integration.test_discovery import sim_argv


@pytest.fixture
def marker():
    """`MARK=...` to put in a command's environment; no such process may outlive the test."""
    mark = f"SGWATCH_LOCAL_TEST={uuid.uuid4().hex}"
    yield mark
    assert wait_until(lambda: not processes_with_env(mark), timeout=5)


def test_localhost_means_no_ssh():
    assert isinstance(transport_for("localhost"), LocalTransport)
    assert isinstance(transport_for("ct129"), SshTransport)


def test_run_with_input_status_and_stderr():
    async def body():
        t = LocalTransport()
        await t.connect()
        return await t.run("cat; echo err >&2; exit 4", input=b"\xffin")

    r = arun(body())
    assert (r.exit_status, r.stdout, r.stderr) == (4, b"\xffin", b"err\n")


@pytest.mark.parametrize("ending", ["stream closed", "transport closed"])
def test_a_quiet_local_stream_ends_when_closed(marker, ending):
    async def body() -> None:
        t = LocalTransport()
        await t.connect()
        stream = await t.stream(f"{marker} sleep 1000")
        assert wait_until(lambda: processes_with_env(marker))
        await (stream.close() if ending == "stream closed" else t.close())

    arun(body())


def test_timed_out_local_command_is_killed(marker):
    async def body() -> None:
        with pytest.raises(TimeoutError):
            await LocalTransport().run(f"{marker} sleep 1000", timeout=0.3)

    arun(body())


def test_discovery_and_log_follower_run_locally(marker, tmp_path: Path):
    log = tmp_path / "server.log"
    argv = sim_argv()
    name, value = marker.split("=")

    async def body():
        t = LocalTransport()
        pid = int((await t.run(detached(argv, str(tmp_path), str(log), {name: value}))).stdout)
        try:
            found = await discover(t, process_patterns())
            link, got = Link(LocalTransport), b""
            async with aclosing(LogFollower(link, str(log), found.python).events()) as events:
                async for ev in events:
                    got += ev.data if isinstance(ev, LogData) else b""
                    if b"server_args=" in got:
                        break
            await link.close()
            return pid, found
        finally:
            os.killpg(pid, signal.SIGTERM)

    pid, found = arun(body())
    (server,) = [s for s in found.servers if s.pid == pid]
    assert (server.argv, server.log, server.cwd) == (argv, str(log), str(tmp_path))
    assert wait_until(lambda: not alive(pid))


def test_a_cancelled_run_is_ended_and_reaped(tmp_path):
    """Quitting the app mid-command leaves no process behind and no half-done work."""
    done = tmp_path / "done"
    tag = f"SGWATCH_CANCEL_{uuid.uuid4().hex}"

    async def quit_midway():
        task = asyncio.ensure_future(
            LocalTransport().run(f"{tag}=1 sh -c 'sleep 30; touch {done}'", timeout=60)
        )
        await until(lambda: processes_with_env(f"{tag}=1"))  # it runs
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    arun(quit_midway())
    assert processes_with_env(f"{tag}=1") == []
    assert not done.exists()
