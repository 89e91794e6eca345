"""A server started in a GNU screen window as a user does (typed with `stuff`), through
the real screen on the sshd's host: with the window's logging on, discovery finds the
log screen writes and `wait` and `events` follow it; with logging off, one line says
how to turn it on or to pass --log."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest

from sgwatch.cli import exitcodes
from sgwatch.sim.common.nvidia_smi import install
from tests.integration.headless import cli_env, discovered, ready_and_followed, sgwatch
from tests.integration.helpers import arun, wait_until
from tests.integration.sshd import free_port

QWEN = ["--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16", "--sim-speed", "50"]


class Screen:
    """Screen sessions of the test's own (their sockets in the test's folder) on
    `gpu129`, flushing their logs every second (screen's default is 10 s)."""

    def __init__(self, host, ssh, folder: Path) -> None:
        self.host, self.ssh, self.folder = host, ssh, folder
        self.sockets = folder / "screens"
        self.sockets.mkdir(mode=0o700)
        self.rc = folder / "screenrc"
        self.rc.write_text("logfile flush 1\n")
        self.state = folder / "gpu-state"
        install(host.gpu_bin, self.state)

    def __call__(self, *args: str) -> None:
        async def go() -> None:
            t = self.ssh("gpu129")
            await t.connect()
            try:
                env = f"SCREENDIR={shlex.quote(str(self.sockets))} "
                r = await t.run(env + shlex.join(["screen", "-c", str(self.rc), *args]), timeout=20)
            finally:
                await t.close()
            assert r.exit_status == 0, r.stderr

        arun(go())

    def type_server(self, session: str) -> None:
        argv = [sys.executable, "-m", "sgwatch.sim", *QWEN, "--port", str(free_port())]
        line = f"cd {shlex.quote(str(self.folder))} && SGWATCH_SIM_STATE={self.state} "
        self("-S", session, "-X", "stuff", line + shlex.join(argv) + "\n")

    def discovered(self):
        return discovered(self.ssh)


@pytest.fixture
def screen(host, ssh, tmp_path):
    if shutil.which("screen") is None:  # under CI=true a skip fails (tests/conftest.py)
        pytest.skip("no screen here (scripts/test installs it)")
    s = Screen(host, ssh, tmp_path)
    yield s
    host.kill_remote_processes()
    assert wait_until(lambda: not host.remote_processes())


def test_a_server_in_a_logged_screen_window_is_followed_through_its_log(host, screen, tmp_path):
    log = tmp_path / "screen.log"
    screen("-dmS", "main", "-L", "-Logfile", str(log))
    screen.type_server("main")
    (server,) = screen.discovered()
    assert server.source.kind == "screen" and server.log == str(log)
    label = server.source.label
    assert label.startswith("screen ") and label.endswith(f".main -> {log}")

    env = cli_env(host, tmp_path / "home")
    ready_and_followed(env, f"{label} (pid {server.pid})")
    assert "The server is fired up and ready to roll!" in log.read_text()


def test_a_screen_window_with_logging_off_says_how_to_turn_it_on(host, screen, tmp_path):
    screen("-dmS", "plain")
    screen.type_server("plain")
    (server,) = screen.discovered()
    assert server.source.kind == "screen" and server.log is None

    env = cli_env(host, tmp_path / "home")
    done = sgwatch(env, "wait", "gpu129", "--timeout", "30")
    assert done.returncode == exitcodes.NO_SERVER
    (line,) = done.stderr.strip().splitlines()
    assert f"(pid {server.pid}) but it runs in screen session " in line
    assert ".plain with logging off: turn it on in that window (C-a H, or `screen -L`)" in line
    assert line.endswith("or pass --log PATH")
