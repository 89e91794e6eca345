"""A server started in a tmux pane as a user does (typed with send-keys), through the
real tmux on the sshd's host: discovery finds the pane from the server's terminal, and
`wait` and `events` follow the pane (its history, then its output through a pipe-pane
into a private file) and leave it as it was: no pipe, no file, no process left."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import signal
import stat
import sys
from contextlib import aclosing
from pathlib import Path

import pytest

from sgwatch.cli import exitcodes
from sgwatch.core.linesplit import LineSplitter
from sgwatch.remote.discover import LogSource
from sgwatch.remote.logfollow import LogData
from sgwatch.remote.panefollow import PaneFollower
from sgwatch.sim.common.nvidia_smi import install
from sgwatch.transport.link import LinkDown
from tests.integration.headless import (
    Lines,
    cli_env,
    discovered,
    ready_and_followed,
    sgwatch,
    start,
)
from tests.integration.helpers import arun, wait_until
from tests.integration.sshd import free_port

QWEN = ["--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16", "--sim-speed", "50"]
NUMBERED = 1500  # lines, within tmux's default history-limit (2,000)
# A numbered writer, then a progress bar drawn with \r as tqdm draws it.
WRITER = f"""import sys, time
for i in range(1, {NUMBERED + 1}):
    print(f"n{{i}}", flush=True)
    time.sleep(0.004)
for k in range(1, 6):
    sys.stdout.write(f"\\rbar {{k}}/5")
    sys.stdout.flush()
    time.sleep(0.1)
print()
print("done")
"""


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

    def piped(self, pane: str) -> str:
        return self.pane(pane, "#{pane_pipe}")


def leftovers(host) -> list[str]:
    """sgwatch's programs still running on the host: the pane follower or its pipe's
    command (which names the private folder)."""
    return [c for _, c in host.remote_processes() if "sgwatch-tmux-" in c or "pipe-pane" in c]


def left_alone(host, tmux: Tmux, pane: str, folders: list[Path]) -> None:
    """After sgwatch left: no pipe on the pane, no private folder, no program of its."""
    assert wait_until(lambda: tmux.piped(pane) == "0")
    assert not [f for f in folders if f.exists()]
    assert wait_until(lambda: not leftovers(host)), leftovers(host)


def private_folders(host) -> list[Path]:
    """The private folders of the pipes sgwatch has open on the host (from the pipe's
    command line: `python3 FOLDER/pipe.py`)."""
    found = (re.search(r"(\S*/sgwatch-tmux-[^/\s]+)/", c) for _, c in host.remote_processes())
    return [Path(m.group(1)) for m in found if m]


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
    assert wait_until(lambda: tmux.piped("main:0.0") == "0") and not leftovers(host)
    assert tmux.pane("main:0.0", "#{pane_current_command}").startswith("python")
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


def test_a_warmup_is_followed_through_a_pipe_gone_when_sgwatch_is_killed(host, tmux, tmp_path):
    argv = [sys.executable, "-m", "sgwatch.sim", *QWEN[:-1], "5", "--port", str(free_port())]
    tmux(
        "send-keys", "-t", "main:0.0", f"SGWATCH_SIM_STATE={tmux.state} {shlex.join(argv)}", "Enter"
    )
    (server,) = tmux.discovered()
    events = Lines(start(cli_env(host, tmp_path / "home"), "events", "gpu129", "--json"))
    try:
        events.until(lambda line: '"state":"live"' in line)
        assert wait_until(lambda: tmux.piped("main:0.0") == "1")  # the pipe, not polling
        (folder,) = wait_until(lambda: private_folders(host))
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert stat.S_IMODE((folder / "out.0").stat().st_mode) == 0o600
        ready = json.loads(events.until(lambda line: '"state":"ready"' in line))
        assert ready["event"] == "phase"
        assert not any('"event":"note"' in line for line in events.seen)
    finally:
        events.proc.kill()  # sgwatch killed: the link drops, the host side cleans up
        events.proc.wait(10)
    left_alone(host, tmux, "main:0.0", [folder])
    assert host.alive(server.pid)  # the server runs on in its pane


def test_pane_lines_come_once_across_the_history_pipe_seam_and_a_drop(host, link, tmux, tmp_path):
    writer = tmp_path / "writer.py"
    writer.write_text(WRITER)
    tmux("send-keys", "-t", "main:0.0", shlex.join([sys.executable, str(writer)]), "Enter")
    # Well into its output before sgwatch comes: the first lines are the pane's history.
    assert wait_until(lambda: "n300" in tmux("capture-pane", "-p", "-t", "main:0.0", "-S", "-"))
    pane = tmux.pane("main:0.0", "#{pane_id}")
    source = LogSource("tmux", "tmux main:0.0", detail={"pane": pane, "socket": str(tmux.socket)})
    seen: dict[str, object] = {}

    async def data_until(events, got: bytearray, marker: bytes) -> None:
        while marker not in got:
            ev = await anext(events)
            if isinstance(ev, LogData):
                got += ev.data
            elif isinstance(ev, LinkDown):
                seen["down"] = True

    async def body() -> bytearray:
        got = bytearray()
        the_link = link("gpu129")
        async with aclosing(PaneFollower(the_link, source).events()) as events:
            await data_until(events, got, b"\r\n")  # a line from the pipe: the tty's \r\n
            seen["piped"] = await asyncio.to_thread(tmux.piped, "main:0.0")
            seen["folders"] = await asyncio.to_thread(private_folders, host)
            await asyncio.to_thread(host.kill_connections)  # the link drops mid-stream
            await data_until(events, got, b"done")
        await the_link.close()
        return got

    got = arun(body(), timeout=60)
    assert seen["piped"] == "1" and len(seen["folders"]) == 1 and seen["down"]
    history = bytes(got).partition(b"\r\n")[0]
    assert b"n1\n" in history  # the history came as the pane shows it, then the pipe's bytes
    lines = LineSplitter().feed(bytes(got))
    numbered = [line for line in lines if re.fullmatch(r"n\d+", line)]
    assert numbered == [f"n{i}" for i in range(1, NUMBERED + 1)]  # none lost, none twice
    # tqdm's \r frames come through the pipe as from a file: each frame a line
    assert [line for line in lines if line.startswith("bar")] == [f"bar {k}/5" for k in range(1, 6)]
    left_alone(host, tmux, "main:0.0", seen["folders"])


def test_a_pane_the_user_pipes_keeps_its_pipe_and_is_polled(host, tmux, tmp_path):
    users = tmp_path / "users-pipe.log"
    tmux("pipe-pane", "-t", "main:0.0", f"cat >> {shlex.quote(str(users))}")
    tmux.type_server("main:0.0")
    (server,) = tmux.discovered()
    env = cli_env(host, tmp_path / "home")
    done = sgwatch(env, "wait", "gpu129", "--timeout", "120")
    assert done.returncode == exitcodes.OK and "READY" in done.stdout.splitlines()[-1]
    events = Lines(start(env, "events", "gpu129", "--json"))
    try:
        note = json.loads(events.until(lambda line: '"event":"note"' in line))
        assert note["text"] == (
            "tmux main:0.0 already has a pipe-pane (left as it is): polled every 0.3 s "
            "instead, lines shown once they end"
        )
        events.until(lambda line: '"state":"ready"' in line)
    finally:
        events.proc.send_signal(signal.SIGINT)
        assert events.finish()[0] == exitcodes.OK
    assert wait_until(lambda: not leftovers(host)), leftovers(host)
    assert tmux.piped("main:0.0") == "1"  # the user's pipe, still there
    assert "The server is fired up and ready to roll!" in users.read_text()
    tmux("send-keys", "-t", "main:0.0", "C-c")  # the user stops it, then types on
    assert wait_until(lambda: not host.alive(server.pid), timeout=30)
    tmux("send-keys", "-t", "main:0.0", "echo still-piped", "Enter")
    assert wait_until(lambda: b"still-piped\r\n" in users.read_bytes())  # after sgwatch left


def test_the_pipe_is_closed_even_when_the_pane_follower_is_killed(host, link, tmux, tmp_path):
    """SIGKILL leaves the host program no last word: the pipe's own command sees it gone,
    closes the pipe and removes the folder."""
    source = LogSource(
        "tmux", "tmux main:0.0", detail={"pane": "main:0.0", "socket": str(tmux.socket)}
    )

    def follower() -> list[int]:
        return [
            pid
            for pid, c in host.remote_processes()
            # the command checked first: one caught as it exits has an empty command line
            if "pipe-pane" in c and " -c " in c and "python" in c.split()[0]
        ]

    async def body() -> list[Path]:
        the_link = link("gpu129")
        async with aclosing(PaneFollower(the_link, source).events()) as events:
            await anext(events)  # opened
            folders = await asyncio.to_thread(wait_until, lambda: private_folders(host))
            (pid,) = follower()
            os.kill(pid, signal.SIGKILL)  # an outside pid (remote_processes)
            async for _ in events:  # it ends: the program is gone
                pass
        await the_link.close()
        return folders

    folders = arun(body(), timeout=30)
    left_alone(host, tmux, "main:0.0", folders)
