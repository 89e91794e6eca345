"""A restart cut off: the link dropped while the restart program is sent, after the old
server stopped, after the new one launched, or sgwatch itself SIGKILLed halfway.

Whatever the moment, the host ends with exactly one server (the old one, or the new
one with the old log kept), and running sgwatch again follows it to ready.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sgwatch.cli import exitcodes
from sgwatch.control.restart import RestartFailed, RestartRequest, restart
from sgwatch.engines import process_patterns
from sgwatch.remote.discover import discover
from sgwatch.transport.ssh import SshTransport
from tests.fault.conftest import ALIAS
from tests.integration.headless import SimHost, cli_env, sgwatch
from tests.integration.helpers import arun, until, wait_until
from tests.integration.sshd import command, is_sshd

QWEN = ("--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16")
READY = b"fired up and ready to roll"


@pytest.fixture
def sims(host, ssh, tmp_path):
    sims = SimHost(host, ssh, tmp_path)
    yield sims
    sims.pids.extend(p for p in servers_in(host, tmp_path) if p not in sims.pids)
    sims.stop()


def servers_in(host, folder: Path) -> list[int]:
    """Simulated servers on the host working in `folder` (the test's own)."""
    out = []
    for proc in host.processes():
        with contextlib.suppress(OSError):
            argv = command(proc.outside).split()
            # the server itself, once its launcher (setsid, nohup) has exec'd it: a
            # discovery before then would rightly not call it a server yet
            if host.cwd(proc.pid) == folder and argv[1:3] == ["-m", "sgwatch.sim"]:
                out.append(proc.pid)
    return out


def ready_server(host, sims, folder: Path) -> int:
    log = folder / "server.log"
    sims.launch(log, *QWEN)
    ready = wait_until(lambda: READY in log.read_bytes(), 60)
    assert ready, "the server never got ready"
    return sims.pids[0]


def host_programs(host, connections: set[int] = frozenset()) -> list[int]:
    """Programs sgwatch sent to the host over stdin (`python3 -`) still running there:
    a restart program outlives the sgwatch that sent it, by design. With them, what
    may still start one: the login's shell before it execs the program (`bash -c exec
    /bin/sh -c 'exec PYTHON -'`: seconds while a loaded host runs the rc file), and
    sshd's processes of a connection not in `connections` (it forks the shell for a
    request before it sees its connection closed: once gone, it started none)."""
    out = []
    for proc in host.processes():
        with contextlib.suppress(OSError):
            line = command(proc.outside)
            argv = line.split()
            program = len(argv) == 2 and "python" in argv[0] and argv[1] == "-"
            shell = (
                argv[1:3] == ["-c", "exec"] and "python" in line and line.endswith((" -", " -'"))
            )
            if program or shell or (sshd_connection(proc) and proc.pid not in connections):
                out.append(proc.pid)
    return out


def sshd_connections(host) -> set[int]:
    return {p.pid for p in host.processes() if sshd_connection(p)}


def sshd_connection(proc) -> bool:
    """sshd's own processes of a connection (the listener is the host's pid 1)."""
    with contextlib.suppress(OSError):
        return proc.pid != 1 and is_sshd(proc.outside)
    return False


def check_one_server(host, folder: Path, old: int) -> int:
    """Exactly one server runs; a new one has the old log kept beside it. Its pid."""
    assert wait_until(lambda: len(servers_in(host, folder)) == 1, 15), servers_in(host, folder)
    (now,) = servers_in(host, folder)
    kept = [p for p in folder.iterdir() if p.name.startswith("server.log.")]
    if now == old:
        assert kept == []
    else:
        assert len(kept) == 1 and READY in kept[0].read_bytes()
    return now


def followed_to_ready(host, folder: Path, pid: int) -> None:
    """The re-run: `sgwatch wait` finds the server that runs and follows it to ready."""
    env = cli_env(host, folder / "home")
    r = sgwatch(env, "wait", "gpu129", "--pid", str(pid), "--timeout", "60")
    assert r.returncode == exitcodes.OK, (r.stdout, r.stderr)


@pytest.mark.parametrize("when", ["sending", "stopped", "launched"])
def test_a_restart_whose_link_drops_leaves_one_server(
    host, sims, proxy, flaky_config, tmp_path, when
):
    old = ready_server(host, sims, tmp_path)

    async def body() -> str:
        t = SshTransport(ALIAS, config=[str(flaky_config)])
        await t.connect()
        found = await discover(t, process_patterns())
        (server,) = [s for s in found.servers if s.pid == old]
        req = RestartRequest(
            argv=[*server.argv, "--enable-metrics"],
            log=server.log,
            pid=old,
            start_time=server.start_time,
            grace_s=5,
            gpu_wait_s=5,
        )
        if when == "sending":  # cut inside the program as it goes up
            proxy.cut_up_after = proxy.last.up_bytes + 3000
        task = asyncio.create_task(restart(t, found.python, req))
        if when == "stopped":
            await until(lambda: not host.alive(old), 30)
            proxy.reset()
        elif when == "launched":
            await until(lambda: len(servers_in(host, tmp_path)) == 1 and not host.alive(old), 30)
            proxy.reset()
        try:
            await task
            return "answered"
        except RestartFailed as e:
            assert e.stage == "link" and "sgwatch wait" in e.message, e.message
            return "link lost"
        finally:
            proxy.cut_up_after = None
            await t.close()

    outcome = arun(body(), timeout=90)
    now = check_one_server(host, tmp_path, old)
    if when == "sending":
        assert outcome == "link lost" and now == old  # cut short: nothing ran
    else:
        assert now != old
    followed_to_ready(host, tmp_path, now)


def test_sgwatch_killed_mid_restart_leaves_one_server(host, sims, tmp_path, seed):
    old = ready_server(host, sims, tmp_path)
    env = cli_env(host, tmp_path / "home")
    before = sshd_connections(host)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sgwatch", "restart", "gpu129", "--pid", str(old),
         "--enable", "enable-metrics", "--yes", "--grace", "5"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    # Somewhere from connecting through the preflight and the stop to the launch.
    time.sleep(random.Random(seed).uniform(0.5, 4.0))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    # A restart program already running finishes its stop, keep and launch: look after.
    assert wait_until(lambda: not host_programs(host, before), 30), host_programs(host, before)
    now = check_one_server(host, tmp_path, old)
    followed_to_ready(host, tmp_path, now)


def test_a_restart_on_a_full_disk_is_refused_and_loses_nothing(host, sims, tmp_path):
    """The log on a disk that is full (a 4 MiB tmpfs, mounted in the host's own mount
    namespace, filled to ENOSPC): renaming the old log aside would work, but the new
    server could write none of its log. The restart is refused before the stop: the
    old server runs on, its log whole and where it was."""
    disk = tmp_path / "disk"
    disk.mkdir()
    in_host = ["nsenter", "-t", str(host.init), "-m", "-p"]  # its /proc, for umount
    subprocess.run([*in_host, "mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", disk], check=True)
    try:
        seen = Path(f"/proc/{host.init}/root{disk}")  # the tmpfs as the host sees it
        sims.launch(disk / "server.log", *QWEN)
        old = sims.pids[0]
        log = seen / "server.log"
        assert wait_until(lambda: READY in log.read_bytes(), 60)
        with open(seen / "filler", "wb", buffering=0) as f, contextlib.suppress(OSError):
            while True:  # until ENOSPC: the disk is full
                f.write(b"\0" * (1 << 16))
        assert os.statvfs(seen).f_bavail == 0
        before = log.read_bytes()
        r = sgwatch(
            cli_env(host, tmp_path / "home"),
            "restart", "gpu129", "--pid", str(old), "--enable", "enable-metrics", "--yes",
        )  # fmt: skip
        assert r.returncode == exitcodes.REFUSED, (r.stdout, r.stderr)
        assert "no room for the new log" in r.stderr and "0 KiB free" in r.stderr, r.stderr
        assert servers_in(host, tmp_path) == [old]  # never stopped
        assert sorted(p.name for p in seen.iterdir()) == ["filler", "server.log"]
        assert log.read_bytes().startswith(before)
    finally:
        subprocess.run([*in_host, "umount", "--lazy", disk], check=True)
