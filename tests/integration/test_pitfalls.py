"""Pitfalls of docs/design/ssh.md not pinned elsewhere, each where the code handles it."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from sgwatch.transport.errors import TooManyChannels
from sgwatch.transport.ssh import MAX_SESSIONS
from tests.integration.detached import detached
from tests.integration.helpers import arun, wait_until

BAD = b"\xff\xfe not utf-8 \xc3\n"


def test_invalid_utf8_arrives_as_bytes_and_the_connection_survives(host, ssh):
    """A strict decoder in the SSH layer closes the whole connection."""

    async def body() -> tuple[bytes, bytes]:
        t = ssh()
        await t.connect()
        try:
            stream = await t.stream("printf '\\377\\376 not utf-8 \\303\\n'")
            got = b"".join([chunk async for chunk in stream])
            return got, (await t.run("echo still here")).stdout
        finally:
            await t.close()

    assert arun(body()) == (BAD, b"still here\n")


def test_streams_stop_below_max_sessions_and_commands_still_run(host, ssh):
    """sshd allows 10 channels per connection; the 11th fails obscurely."""

    async def body() -> bytes:
        t = ssh()
        await t.connect()
        try:
            streams = [await t.stream("sleep 1000") for _ in range(MAX_SESSIONS - 2)]
            with pytest.raises(TooManyChannels, match="MaxSessions"):
                await t.stream("sleep 1000")
            out = (await t.run("echo ok")).stdout + (await t.run("cat", input=b"in")).stdout
            await streams[0].close()
            await (await t.stream("true")).close()  # a freed slot is usable again
            return out
        finally:
            await t.close()

    assert arun(body()) == b"ok\nin"


def test_short_commands_share_one_shell(host, ssh):
    """Each exec channel starts the login shell (~90 ms with pyenv in .bashrc)."""

    async def body() -> list[bytes]:
        t = ssh()
        await t.connect()
        try:
            return [(await t.run(f"echo {i}; exit {i % 3}")).stdout for i in range(20)]
        finally:
            await t.close()

    before = host.sessions_started()
    assert arun(body()) == [f"{i}\n".encode() for i in range(20)]
    assert host.sessions_started() - before == 1


def test_detached_launch_returns_at_once_and_outlives_the_connection(host, ssh, tmp_path: Path):
    """Every redirection, `cd ... || exit` on its own line, unbuffered Python."""
    log = tmp_path / "out.log"
    argv = ["python3", "-c", "import time\nwhile True: print('tick'); time.sleep(0.1)"]

    async def body() -> int:
        t = ssh()
        await t.connect()
        try:
            return int((await t.run(detached(argv, str(tmp_path), str(log)), timeout=5)).stdout)
        finally:
            await t.close()

    pid = arun(body())
    try:
        assert log.exists()  # made before the fork: readable once the pid is back
        # three ticks at once: not block-buffered
        assert wait_until(lambda: log.read_bytes().count(b"tick\n") >= 3)
        assert host.alive(pid) and host.ids(pid) == (pid, pid)  # its own group and session
    finally:
        host.killpg(pid, signal.SIGKILL)
    assert wait_until(lambda: not host.alive(pid))


def test_detached_launch_with_a_log_it_cannot_write_launches_nothing(ssh, tmp_path: Path):
    """The log is made before the fork: a path that cannot be written fails the launch
    at once, with the shell's reason, instead of a job that dies unseen."""
    marker = tmp_path / "ran"
    argv = ["touch", str(marker)]
    log = tmp_path / "no-such-folder" / "out.log"

    async def body():
        t = ssh()
        await t.connect()
        try:
            return await t.run(detached(argv, str(tmp_path), str(log)), timeout=5)
        finally:
            await t.close()

    r = arun(body())
    assert (r.exit_status, r.stdout) == (1, b"")  # no pid: nothing was started
    assert b"cannot create" in r.stderr and str(log).encode() in r.stderr
    assert not marker.exists()
