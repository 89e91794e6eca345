"""A disk that fills after the restart's room check: the log's filesystem (a 4 MiB
tmpfs mounted in the host's own mount namespace) has room when the restart begins, and
the old server fills it as it exits (a dump written at exit, as a profiler trace or a
core would be; here an atexit hook of the server's Python). The restart then stops with
a failure that names the full disk, launches nothing that could not log, and leaves the
old log whole where it was."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sgwatch.cli import exitcodes
from tests.fault.test_restart_faults import QWEN, READY, servers_in, sims  # noqa: F401
from tests.integration.detached import detached
from tests.integration.headless import cli_env, sgwatch
from tests.integration.helpers import arun, wait_until
from tests.integration.sshd import free_port

# Imported by the server's Python at start-up (its PYTHONPATH): at exit, appends to
# $FILL_AT_EXIT until the disk is full.
FILL_AT_EXIT = """import atexit, os
def _fill():
    path = os.environ.get("FILL_AT_EXIT")
    if path:
        with open(path, "ab", buffering=0) as f:
            try:
                while True:
                    f.write(b"\\0" * 65536)
            except OSError:
                pass
atexit.register(_fill)
"""


def launch_filling(host, ssh, sims, log: Path, filler: Path, hook: Path) -> int:  # noqa: F811
    """The simulated server, detached on the host, that fills `filler`'s disk at exit."""
    argv = [sys.executable, "-m", "sgwatch.sim", *QWEN, "--port", str(free_port())]
    argv += ["--host", "127.0.0.1", "--sim-speed", "50", "--sim-seed", "7"]
    env = {"SGWATCH_SIM_STATE": str(sims.state), "PYTHONPATH": str(hook)}
    env["FILL_AT_EXIT"] = str(filler)

    async def run() -> int:
        t = ssh("gpu129")
        await t.connect()
        try:
            r = await t.run(detached(argv, str(sims.folder), str(log), env), timeout=10)
        finally:
            await t.close()
        return int(r.stdout)

    pid = arun(run())
    sims.pids.append(pid)
    return pid


def test_a_disk_filled_while_the_server_stops_is_named_and_the_old_log_kept(
    host,
    ssh,
    sims,  # noqa: F811
    tmp_path,
):
    disk, hook = tmp_path / "disk", tmp_path / "hook"
    disk.mkdir()
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(FILL_AT_EXIT)
    in_host = ["nsenter", "-t", str(host.init), "-m", "-p"]  # its /proc, for umount
    subprocess.run([*in_host, "mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", disk], check=True)
    try:
        seen = Path(f"/proc/{host.init}/root{disk}")  # the tmpfs as the host sees it
        old = launch_filling(host, ssh, sims, disk / "server.log", disk / "dump", hook)
        log = seen / "server.log"
        assert wait_until(lambda: READY in log.read_bytes(), 60)
        assert os.statvfs(seen).f_bavail * os.statvfs(seen).f_frsize > 3 << 20  # room now
        r = sgwatch(
            cli_env(host, tmp_path / "home"),
            "restart", "gpu129", "--pid", str(old), "--enable", "enable-metrics", "--yes",
            "--grace", "10", "--timeout", "30",
        )  # fmt: skip
        assert r.returncode == exitcodes.FAILED, (r.stdout, r.stderr)
        assert f"restart failed (space): no space left on {disk} (0 KiB free)" in r.stderr
        assert f"the old log is untouched at {disk}/server.log" in r.stderr, r.stderr
        assert os.statvfs(seen).f_bavail == 0  # the old server's dump filled it
        assert servers_in(host, tmp_path) == []  # stopped; nothing launched onto a full disk
        assert sorted(p.name for p in seen.iterdir()) == ["dump", "server.log"]
        assert READY in log.read_bytes() and b"Finished server process" in log.read_bytes()
    finally:
        subprocess.run([*in_host, "umount", "--lazy", disk], check=True)
