"""A server started in a tmux pane as a user does (typed with send-keys), through the
real tmux on the sshd's host: discovery finds the pane from the server's terminal,
and `wait` and `events` follow the pane's lines without touching the pane."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest

from sgwatch.cli import exitcodes
from sgwatch.sim.nvidia_smi import install
from tests.integration.headless import (
    cli_env,
    discovered,
    ready_and_followed,
    sgwatch,
)
from tests.integration.helpers import arun, wait_until
from tests.integration.sshd import free_port

QWEN = ["--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16", "--sim-speed", "50"]


class Tmux:
    """A tmux server of the test's own (its socket in the test's folder) on `gpu129`."""

    def __init__(self, host, ssh, folder: Path) -> None:
        self.host, self.ssh, self.folder = host, ssh, folder
        self.socket = folder / "tmux.sock"
        self.state = folder / "gpu-state"
        install(host.gpu_bin, self.state)

    def __call__(self, *args: str) -> str:
        async def go() -> str:
            t = self.ssh("gpu129")
            await t.connect()
            try:
                r = await t.run(shlex.join(["tmux", "-S", str(self.socket), *args]), timeout=20)
            finally:
                await t.close()
            assert r.exit_status == 0, r.stderr
            return r.stdout.decode()

        return arun(go())

    def type_server(self, pane: str) -> None:
        argv = [sys.executable, "-m", "sgwatch.sim", *QWEN, "--port", str(free_port())]
        line = f"cd {shlex.quote(str(self.folder))} && SGWATCH_SIM_STATE={self.state} "
        self("send-keys", "-t", pane, line + shlex.join(argv), "Enter")

    def pane(self, pane: str, fmt: str) -> str:
        return self("display-message", "-p", "-t", pane, fmt).strip()

    def discovered(self):
        return discovered(self.ssh)


@pytest.fixture
def tmux(host, ssh, tmp_path):
    t = Tmux(host, ssh, tmp_path)
    t("new-session", "-d", "-s", "main", "-x", "160", "-y", "40")
    yield t
    t("kill-server")
    assert wait_until(lambda: not host.remote_processes())


def test_a_server_typed_into_a_tmux_pane_is_followed_and_the_pane_left_alone(host, tmux, tmp_path):
    tmux.type_server("main:0.0")
    (server,) = tmux.discovered()
    assert (server.source.kind, server.source.label) == ("tmux", "tmux main:0.0")
    assert server.source.detail["socket"] == str(tmux.socket)  # from the server's $TMUX
    assert server.stdout.startswith("/dev/pts/") and server.log is None

    env = cli_env(host, tmp_path / "home")
    ready_and_followed(env, f"tmux main:0.0 (pid {server.pid})")
    # A restart in the pane, as the user would: Ctrl-C, the prompt, the command typed.
    edit = sgwatch(env, "restart", "gpu129", "--set", "mem-fraction-static=0.8", "--yes")
    assert edit.returncode == exitcodes.OK, edit.stderr
    assert "READY" in edit.stdout.splitlines()[-1]
    (new,) = tmux.discovered()
    assert new.pid != server.pid and not host.alive(server.pid)
    assert (new.source.kind, new.source.label) == ("tmux", "tmux main:0.0")
    assert new.argv == [*server.argv, "--mem-fraction-static", "0.8"]
    typed = tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "main:0.0")
    assert "^C" in typed and "--mem-fraction-static 0.8" in typed
    # The user's pane: no pipe, the server still its program, the history as printed.
    assert tmux.pane("main:0.0", "#{pane_pipe} #{pane_current_command}").startswith("0 python")
    history = tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "main:0.0")
    assert "The server is fired up and ready to roll!" in history


def test_launch_in_tmux_types_the_server_into_a_new_window(host, tmux, tmp_path):
    # The host's own tmux, pointed at the test's server (as TMUX_TMPDIR would point it).
    wrapper = host.gpu_bin / "tmux"
    wrapper.write_text(f'#!/bin/sh\nexec {shutil.which("tmux")} -S {tmux.socket} "$@"\n')
    wrapper.chmod(0o755)
    try:
        argv = [f"SGWATCH_SIM_STATE={tmux.state}", sys.executable, "-m", "sgwatch.sim", *QWEN]
        env = cli_env(host, tmp_path / "home")
        done = sgwatch(
            env, "launch", "gpu129", "--in-tmux", "main", "--cwd", str(tmp_path), "--wait",
            "--timeout", "120", "--", *argv, "--port", str(free_port()),
        )  # fmt: skip
        assert done.returncode == exitcodes.OK, done.stdout + done.stderr
        assert "in tmux session main" in done.stdout and "READY" in done.stdout.splitlines()[-1]
        (server,) = tmux.discovered()
        assert server.source.label == "tmux main:1.0" and server.cwd == str(tmp_path)
        typed = tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "main:1.0")
        assert "sgwatch.sim" in typed  # as typed at the prompt
    finally:
        wrapper.unlink()
