"""`sgwatch HOST` without a terminal (an agent's shell tool, cron, a pipe): one line naming
the headless commands and exit 2, before Textual is imported or the host is reached."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sgwatch.cli import exitcodes, notty


@pytest.fixture
def listening() -> socket.socket:
    """A loopback port nothing answers on: a connection attempt would wait in its queue."""
    sock = socket.create_server(("127.0.0.1", 0))
    sock.setblocking(False)
    yield sock
    sock.close()


def without_terminal(home: Path, port: int, *args: str) -> subprocess.CompletedProcess:
    """`python -m sgwatch ARGS` with stdin from /dev/null and stdout and stderr into pipes,
    `somehost` being an ssh alias for `port`. A dashboard started anyway would never end:
    the run's timeout fails the test."""
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "config").write_text(
        f"Host somehost\n    HostName 127.0.0.1\n    Port {port}\n"
    )
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    return subprocess.run(
        [sys.executable, "-m", "sgwatch", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("somehost",), "somehost"),
        (("--demo",), "HOST"),
        (("status", "somehost"), "status"),  # a command sgwatch lacks is a host, as always
    ],
)
def test_no_terminal_is_one_line_naming_the_headless_commands(tmp_path, listening, args, named):
    port = listening.getsockname()[1]
    r = without_terminal(tmp_path / "home", port, *args)
    assert r.returncode == exitcodes.USAGE
    assert r.stdout == ""  # no escape codes into the pipe
    (line,) = r.stderr.splitlines()
    assert "the dashboard needs a terminal" in line
    for command in (f"sgwatch wait {named}", f"sgwatch events {named} --json", "sgwatch mcp"):
        assert command in line
    with pytest.raises(BlockingIOError):  # and nothing knocked on the host's port
        listening.accept()


def test_refused_before_textual_is_imported():
    code = (
        "import sys; from sgwatch.cli.main import main; status = main(['somehost']); "
        "print(status, any(m.split('.')[0] == 'textual' for m in sys.modules))"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.stdout.split() == [str(exitcodes.USAGE), "False"], r.stderr


def test_help_and_version_still_print_into_a_pipe():
    for flag in ("--help", "--version"):
        r = subprocess.run(
            [sys.executable, "-m", "sgwatch", flag],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == exitcodes.OK and "sgwatch" in r.stdout


def test_a_terminal_is_all_three_streams_on_a_tty():
    leader, follower = os.openpty()
    tty = os.fdopen(follower, "w")
    read, write = os.pipe()
    pipe = os.fdopen(write, "w")
    try:
        assert notty.terminal((tty, tty, tty))
        assert not notty.terminal((tty, pipe, tty))
        assert not notty.terminal((None, tty, tty))  # stdin closed
    finally:
        for f in (tty, pipe):
            f.close()
        os.close(leader)
        os.close(read)


def test_launch_without_a_terminal_needs_wait_and_starts_nothing(tmp_path, listening):
    server = ("python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B")
    r = without_terminal(tmp_path / "home", listening.getsockname()[1], "launch", "somehost",
                         "--", *server)  # fmt: skip
    assert r.returncode == exitcodes.USAGE and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert "add --wait" in line and "nothing was started" in line
    with pytest.raises(BlockingIOError):
        listening.accept()
