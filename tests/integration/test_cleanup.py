"""Nothing sgwatch starts on the host outlives it, however it ends (docs/design/ssh.md).

sshd sends no signal to a command without a pty when the channel or the
connection goes, and this fixture logs in as root on OpenSSH 9.2, where even an
explicit signal request is refused. `sleep` is the hard case: it never writes,
so it never notices on its own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import asyncssh
import pytest

from sgwatch.sim.common.nvidia_smi import install
from tests.integration.helpers import arun, wait_until

SLEEP = "sleep 1000"


def running(host, needle: str) -> list[tuple[int, str]]:
    return [p for p in host.remote_processes() if needle in p[1]]


def test_a_bare_quiet_command_lingers_after_its_channel_closes(host):
    """Why the watchdog exists: the pitfall, reproduced without it."""

    async def body() -> None:
        async with asyncssh.connect("ct129", config=[str(host.ssh_config)]) as conn:
            proc = await conn.create_process(SLEEP)
            assert wait_until(lambda: running(host, SLEEP))
            proc.close()  # sshd delays the close until the command exits: do not wait

    arun(body())
    assert running(host, SLEEP)  # still there after the channel and the connection closed
    host.kill_remote_processes()


@pytest.mark.parametrize("ending", ["stream closed", "connection closed", "connection dropped"])
def test_a_quiet_stream_ends_with_its_channel(host, ssh, ending):
    async def body() -> None:
        t = ssh()
        await t.connect()
        stream = await t.stream(SLEEP)
        assert wait_until(lambda: running(host, SLEEP))
        if ending == "stream closed":
            await stream.close()
        elif ending == "connection closed":
            await t.close()
        else:
            host.kill_connections()
        assert wait_until(lambda: not running(host, SLEEP))
        await t.close()

    arun(body())


def test_a_timed_out_command_is_killed_and_the_next_one_runs(host, ssh):
    async def body() -> bytes:
        t = ssh()
        await t.connect()
        try:
            with pytest.raises(TimeoutError):
                await t.run(SLEEP, timeout=0.5)
            assert wait_until(lambda: not running(host, SLEEP))
            return (await t.run("echo ok")).stdout
        finally:
            await t.close()

    assert arun(body()) == b"ok\n"


CLIENT = textwrap.dedent("""
    import asyncio, sys
    from sgwatch.remote.gpustream import GpuStream
    from sgwatch.remote.logfollow import LogFollower
    from sgwatch.transport.link import Link
    from sgwatch.transport.ssh import SshTransport

    async def main(config, log):
        gpu = Link(lambda: SshTransport("gpu129", config=[config]))
        plain = Link(lambda: SshTransport("ct129", config=[config]))
        streams = [GpuStream(gpu, interval_ms=200).events(), LogFollower(plain, log).events()]
        for events in streams:
            await anext(events)
        sleeper = await (await plain.connected()).stream("sleep 1000")
        print("ready", flush=True)
        await asyncio.sleep(1000)

    asyncio.run(main(*sys.argv[1:]))
""")


def test_nothing_survives_a_killed_client(host, tmp_path: Path):
    install(host.gpu_bin, tmp_path / "gpu-state")
    log = tmp_path / "server.log"
    log.write_text("hello\n")
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, str(host.ssh_config), str(log)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert client.stdout.readline() == "ready\n"
        for needle in ("common.nvidia_smi -", str(log), SLEEP):
            assert wait_until(lambda n=needle: running(host, n)), needle
    finally:
        os.kill(client.pid, signal.SIGKILL)
        client.wait()
    assert host.wait_no_remote_processes() == []
