"""The fleet table ends with its terminal, or with a kill, as the host dashboard does.

`sgwatch fleet` runs in a tmux pane of its own tmux server; closing that server hangs
up the pane (SIGHUP), as closing a terminal window does. After a kill the pane is kept
(`remain-on-exit`) to see the terminal as sgwatch left it: a clean exit leaves the
alternate screen and turns mouse reporting off, a process killed outright does neither.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.integration.helpers import wait_until
from tests.integration.sshd import alive

EXIT_WITHIN = 2.0


def tmux(sock: str, *args: str, env: dict[str, str] | None = None) -> str:
    cmd = ["tmux", "-L", sock, *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=10).stdout


@pytest.mark.parametrize("end", ["close", "SIGTERM"])
def test_the_fleet_table_ends_with_its_terminal_or_a_kill(end: str, tmp_path: Path):
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    with socket.socket() as refusing:  # bound, never listening: connections are refused
        refusing.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{refusing.getsockname()[1]}"
        sock = f"sgwatch-fleet-{uuid.uuid4().hex[:8]}"
        cmd = f"exec {sys.executable} -m sgwatch fleet --prometheus {url}"
        tmux(sock, "new-session", "-d", "-s", "t", "-x", "140", "-y", "45", cmd, env=env)
        tmux(sock, "set-option", "-g", "remain-on-exit", "on")
        try:
            pid = int(tmux(sock, "list-panes", "-F", "#{pane_pid}").split()[0])
            shown = wait_until(lambda: "stale" in tmux(sock, "capture-pane", "-p"), 30)
            assert shown, tmux(sock, "capture-pane", "-p")
            t0 = time.monotonic()
            if end == "close":
                tmux(sock, "kill-server")
            else:
                os.kill(pid, signal.SIGTERM)
            wait_until(lambda: not alive(pid), EXIT_WITHIN + 1.0)
            took = time.monotonic() - t0
            assert not alive(pid), f"{end}: sgwatch fleet still runs after {took:.1f} s"
            assert took <= EXIT_WITHIN, (end, took)
            if end == "SIGTERM":
                modes = "#{alternate_on} #{mouse_any_flag}"
                left = tmux(sock, "list-panes", "-F", modes).split()
                assert left == ["0", "0"], f"alternate screen, mouse left on: {left}"
        finally:
            tmux(sock, "kill-server")
