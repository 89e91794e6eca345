"""The terminal closed, or sgwatch killed, at random moments: nothing may be left running.

sgwatch runs in a tmux pane as a user runs it. Closing the tmux session sends the
pane SIGHUP, as closing a terminal window does; SIGTERM is a `kill`; SIGKILL gives
sgwatch no chance at all, and the demo's simulator must still die with it.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import select
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from functools import partial
from pathlib import Path

import psutil
import pytest

from tests.fault.conftest import figures
from tests.integration.headless import SimHost, cli_env
from tests.integration.helpers import wait_until
from tests.integration.sshd import alive, children, cmdline, descendants, is_sshd

ROUNDS = 20
BATCH = 4
EXIT_WITHIN = 2.0


class Pane:
    """sgwatch as the only command of a tmux pane, on a tmux server of its own."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.socket = f"sgwatch-fault-{uuid.uuid4().hex[:8]}"
        cmd = " ".join([sys.executable, "-m", "sgwatch", *args])
        self._tmux("new-session", "-d", "-s", "t", "-x", "140", "-y", "45", f"exec {cmd}", env=env)
        self.pid = int(self._tmux("list-panes", "-F", "#{pane_pid}").split()[0])

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", *keys)

    def close(self) -> None:
        """Close the terminal: tmux hangs up the pane (SIGHUP)."""
        self._tmux("kill-server")

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        r = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=env, timeout=10
        )
        return r.stdout


@pytest.fixture
def home(host, tmp_path: Path) -> dict[str, str]:
    return cli_env(host, tmp_path / "home")


def gone_within(pids: list[int], seconds: float) -> list[int]:
    wait_until(lambda: not any(alive(p) for p in pids), seconds)
    return [p for p in pids if alive(p)]


def test_the_demo_ends_with_its_terminal_or_a_kill_at_any_moment(home, seed):
    rng = random.Random(seed)
    ends = ["close"] * 12 + ["SIGTERM"] * 4 + ["SIGKILL"] * 4
    rng.shuffle(ends)
    took_s: dict[str, list[float]] = {end: [] for end in ends}
    for batch in range(0, ROUNDS, BATCH):  # a few at a time: start-up is the slow part
        panes = [Pane(home, "--demo") for _ in range(BATCH)]
        try:
            for pane in panes:
                assert wait_until(partial(descendants, pane.pid), 15), "the demo did not start"
            for pane, end in zip(panes, ends[batch : batch + BATCH], strict=True):
                time.sleep(rng.uniform(0.0, 1.0))  # start-up, first frames, warmup
                pids = [pane.pid, *descendants(pane.pid)]
                t0 = time.monotonic()
                if end == "close":
                    pane.close()
                else:
                    os.kill(pane.pid, getattr(signal, end))
                left = gone_within(pids, EXIT_WITHIN + 1.0)
                took = time.monotonic() - t0
                assert not left, f"{end}: still running after {EXIT_WITHIN} s: {left}"
                assert took <= EXIT_WITHIN + 0.5, (end, took)
                took_s[end].append(took)
        finally:
            for pane in panes:
                pane.close()
    figures(
        test="terminal",
        **{end: [min(t), statistics.median(t), max(t)] for end, t in took_s.items()},
    )


def test_a_dashboard_ends_with_its_terminal_as_the_server_turns_ready(host, ssh, home, tmp_path):
    """Closed just as the ready notification shows: sgwatch and everything it ran on
    the host end (the simulated server itself is not sgwatch's and stays)."""
    sims = SimHost(host, ssh, tmp_path)
    try:
        sims.launch(tmp_path / "server.log", "--model-path", "Qwen/Qwen3-8B", speed="40")
        pane = Pane(home, "gpu129")
        try:
            assert wait_until(lambda: "READY" in pane.screen() or "SERVING" in pane.screen(), 60)
            pids = [pane.pid, *descendants(pane.pid)]
            pane.close()
            assert not gone_within(pids, EXIT_WITHIN + 0.5)
        finally:
            pane.close()

        def ours() -> list[int]:
            """What sgwatch ran on the host: all but the server's process group."""
            return [
                p.outside
                for p in host.processes()
                if p.pgid not in sims.pids and alive(p.outside) and not is_sshd(p.outside)
            ]

        wait_until(lambda: not ours(), 5)
        assert not ours()
    finally:
        sims.stop()


def test_the_demo_ends_with_its_terminal_folder_and_all(home):
    """Closed mid-warmup (bench/terminal_close.py closes it as READY shows): the
    terminal is gone, so nothing is left to restore and the exit does not wait for
    Textual's (which can block on the dead terminal): sgwatch, its server and its
    commands end within 2 s, and the demo's folder goes with them."""
    pane = Pane(home, "--demo")
    try:
        assert wait_until(lambda: "Qwen" in pane.screen() and demo_server(pane.pid), 30)
        pids = [pane.pid, *descendants(pane.pid)]
        folders = {Path(psutil.Process(p).cwd()) for p in pids if alive(p)}
        (folder,) = [f for f in folders if f.name.startswith("sgwatch-demo-")]
        t0 = time.monotonic()
        pane.close()
        left = gone_within(pids, EXIT_WITHIN)
        took = time.monotonic() - t0
        assert not left and not folder.exists(), (left, folder)
        figures(test="terminal_demo_closed", took=took)
    finally:
        pane.close()


def working_in(folder: Path) -> list[int]:
    """The live processes whose working directory is `folder` (the demo's servers)."""
    found = [p.pid for p in psutil.process_iter(["cwd"]) if p.info["cwd"] == str(folder)]
    return [p for p in found if alive(p)]


def demo_server(sgwatch: int) -> int | None:
    """The demo's simulated server: sgwatch's child running `-m sgwatch.sim --model-path`."""
    for pid in descendants(sgwatch):
        with contextlib.suppress(OSError):
            if cmdline(pid)[1:4] == ["-m", "sgwatch.sim", "--model-path"]:
                return pid
    return None


def test_a_demo_server_restarted_from_the_flag_panel_dies_with_a_killed_sgwatch(tmp_path):
    """The restart program launches the new server and exits: its parent is gone at
    once, so only the server's own watch on sgwatch can end it when sgwatch is SIGKILLed.
    The demo's folder (log, stand-in nvidia-smi) goes with it."""
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    pane = Pane(env, "--demo")
    first = folder = None
    try:
        first = wait_until(lambda: demo_server(pane.pid), 15)
        assert first, "the demo did not start"
        folder = Path(os.readlink(f"/proc/{first}/cwd"))
        # the flag panel needs the discovered server: it is, once its log is followed
        assert wait_until(lambda: "● live" in pane.screen(), 60), pane.screen()
        pane.keys("f")
        assert wait_until(lambda: "R restarts with" in pane.screen(), 30), pane.screen()
        pane.keys("R")
        assert wait_until(lambda: "y restart" in pane.screen(), 30)
        pane.keys("y")
        said = wait_until(lambda: re.search(r"restarted: pid (\d+)", pane.screen()), 60)
        assert said, pane.screen()
        new = int(said[1])
        assert alive(new) and new not in descendants(pane.pid)  # the restart program's orphan
        assert new in working_in(folder)
        t0 = time.monotonic()
        os.kill(pane.pid, signal.SIGKILL)
        assert wait_until(lambda: not working_in(folder), EXIT_WITHIN), working_in(folder)
        assert wait_until(lambda: not folder.exists(), EXIT_WITHIN), list(folder.iterdir())
        figures(test="restarted-demo-sigkill", gone_s=time.monotonic() - t0)
    finally:
        pane.close()
        for pid in working_in(folder) if folder else []:  # what a failure left
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


class HungUpTerminal:
    """sgwatch under a shell that ignores SIGHUP, in a terminal of its own (a pty whose
    master is ours). Closing the master hangs the terminal up: the kernel signals only
    the session's leader, the shell, so sgwatch gets no SIGHUP, only EOF and EIO."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.master, slave = os.openpty()
        cmd = " ".join([sys.executable, "-m", "sgwatch", *args])
        self.shell = subprocess.Popen(
            ["setsid", "--ctty", "sh", "-c", f'trap "" HUP; {cmd}; true'],
            stdin=slave, stdout=slave, stderr=slave, env=env,
        )  # fmt: skip
        os.close(slave)
        self.screen = bytearray()
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:  # the screen's bytes: a full pty would block sgwatch
        while not self._stop.is_set():
            if select.select([self.master], [], [], 0.05)[0]:
                try:
                    self.screen += os.read(self.master, 1 << 16)
                except OSError:
                    return

    def sgwatch(self) -> int | None:
        return next(iter(children(self.shell.pid)), None)

    def hang_up(self) -> None:
        """Close the master (the reader first: a read in progress would keep it open)."""
        if not self._stop.is_set():
            self._stop.set()
            self._reader.join()
            os.close(self.master)


def test_the_demo_ends_when_its_terminal_fails_without_a_sighup(tmp_path, seed):
    rng = random.Random(seed)
    env = {**os.environ, "HOME": str(tmp_path / "home"), "TERM": "xterm-256color"}
    took_s = [hang_up_at_random(HungUpTerminal(env, "--demo"), rng) for _ in range(4)]
    figures(test="terminal-eio", eio=[min(took_s), statistics.median(took_s), max(took_s)])


def hang_up_at_random(term: HungUpTerminal, rng: random.Random) -> float:
    """Seconds from the hangup until sgwatch and all it started are gone."""
    try:
        assert wait_until(lambda: (p := term.sgwatch()) and demo_server(p), 15), term.screen
        assert wait_until(lambda: b"demo" in term.screen, 15)  # the dashboard is up
        time.sleep(rng.uniform(0.0, 1.5))  # first frames, warmup
        pids = [term.sgwatch(), *descendants(term.sgwatch())]
        t0 = time.monotonic()
        term.hang_up()
        left = gone_within(pids, EXIT_WITHIN + 1.0)
        took = time.monotonic() - t0
        assert not left, f"still running after the terminal hung up: {left}"
        assert took <= EXIT_WITHIN + 0.5, took
        assert term.shell.wait(5) == 0  # the shell goes on to its `true`
        return took
    finally:
        for pid in descendants(term.shell.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        term.hang_up()
