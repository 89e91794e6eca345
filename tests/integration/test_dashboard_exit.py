"""The dashboard's exit status, as a script that opened it sees it: `sgwatch HOST` in a
real terminal (a pty), quit with `q` once the screen shows what went wrong."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from importlib.resources import files

from sgwatch.cli import exitcodes
from sgwatch.cli.main import SAMPLE_LOG
from tests.integration.headless import cli_env, sgwatch
from tests.integration.sshd import free_port


def on_screen_then_quit(env: dict[str, str], *args: str, seen: bytes, timeout: float = 60) -> int:
    """Run the dashboard in a 120x40 terminal until `seen` is drawn, press q, and
    return its exit status."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "sgwatch", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**env, "TERM": "xterm-256color"},
        start_new_session=True,
    )
    os.close(slave)
    screen, pressed = b"", False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if select.select([master], [], [], 0.2)[0]:
                try:
                    screen += os.read(master, 1 << 16)
                except OSError:  # the terminal closed: the dashboard has exited
                    break
            if not pressed and seen in screen:
                os.write(master, b"q")
                pressed = True
            if pressed and proc.poll() is not None:
                break
        assert pressed, f"{seen!r} never drawn; the screen ended with {screen[-500:]!r}"
        return proc.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


def test_an_unreachable_host_shown_then_quit_exits_3(host, tmp_path):
    extra = f"Host gone\n    HostName 127.0.0.1\n    Port {free_port()}\n    User {host.user}\n"
    env = cli_env(host, tmp_path / "home", extra)
    assert on_screen_then_quit(env, "gone", seen=b"cannot connect") == exitcodes.UNREACHABLE


def test_a_bad_config_file_is_bad_input_before_any_screen(host, tmp_path):
    bad = tmp_path / "config.toml"
    bad.write_text("theme = 7\n")
    r = sgwatch(cli_env(host, tmp_path / "home"), "ct129", "--config", str(bad))
    assert r.returncode == exitcodes.USAGE
    assert str(bad) in r.stderr and "theme" in r.stderr


def test_a_host_watched_then_quit_exits_0(host, tmp_path):
    log = tmp_path / "server.log"
    log.write_bytes((files("sgwatch.samples") / SAMPLE_LOG).read_bytes())
    env = cli_env(host, tmp_path / "home")
    assert on_screen_then_quit(env, "ct129", "--log", str(log), seen=b"SERVING") == exitcodes.OK
