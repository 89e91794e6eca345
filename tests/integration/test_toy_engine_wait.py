"""`sgwatch wait` over the test sshd against the toy engine (tests/toyengine), which
sgwatch knows only through SGWATCH_ENGINES: discovery finds its server by the toy's
process pattern, and its log is read by the toy's parser."""

from __future__ import annotations

import contextlib
import re
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from sgwatch.cli import exitcodes
from tests.integration.detached import detached
from tests.integration.headless import Lines, cli_env, sgwatch, start
from tests.integration.helpers import arun, wait_until
from tests.toyengine.run import registered, server_argv


class ToyHost:
    """Toy servers started detached on the `gpu129` host, all killed at the end."""

    def __init__(self, host, ssh, folder: Path) -> None:
        self.host, self.ssh, self.folder = host, ssh, folder
        self.pids: list[int] = []  # as the host numbers them

    def launch(self, log: Path, *args: str) -> int:
        argv = server_argv("--model", "tiny/toy-1b", "--speed", "5", *args)

        async def run() -> int:
            t = self.ssh("gpu129")
            await t.connect()
            try:
                r = await t.run(detached(argv, str(self.folder), str(log)), timeout=10)
            finally:
                await t.close()
            return int(r.stdout)

        self.pids.append(arun(run()))
        return self.pids[-1]

    def stop(self) -> None:
        for pid in self.pids:
            with contextlib.suppress(ProcessLookupError):
                self.host.killpg(pid, signal.SIGKILL)
        assert wait_until(lambda: not any(self.host.alive(p) for p in self.pids))


@pytest.fixture
def toys(host, ssh, tmp_path) -> Iterator[ToyHost]:
    made = ToyHost(host, ssh, tmp_path)
    yield made
    made.stop()


def test_wait_finds_a_toy_server_by_its_pid_and_follows_it_to_ready(host, toys, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "toy.log"
    pid = toys.launch(log)
    toy = registered(env)
    r = sgwatch(toy, "wait", "gpu129", "--pid", str(pid), "--timeout", "60")
    assert r.returncode == exitcodes.OK, r.stderr
    assert "READY" in r.stdout.splitlines()[-1]

    serving = sgwatch(toy, "wait", "gpu129", "--pid", str(pid), "--until", "serving")
    assert serving.returncode == exitcodes.OK, serving.stderr
    assert re.search(r" phase serving$", serving.stdout, re.M)

    # Unregistered, nothing on the host looks like a server: the toy's pattern found it.
    unknown = sgwatch(env, "wait", "gpu129", "--pid", str(pid), "--timeout", "60")
    assert unknown.returncode == exitcodes.NO_SERVER
    assert f"no server with pid {pid}" in unknown.stderr


def test_wait_reports_a_toy_crash_with_its_reason(host, toys, tmp_path):
    env = registered(cli_env(host, tmp_path / "home"))
    log = tmp_path / "toy.log"
    lines = Lines(start(env, "wait", "gpu129", "--log", str(log), "--timeout", "120"))
    lines.until(lambda line: "waiting" in line)  # the log is not there yet
    toys.launch(log, "--crash-at", "loading")
    status, out, err = lines.finish()
    assert status == exitcodes.FAILED, err
    reason = "CRASHED during loading_weights: RuntimeError: the toy fell over while loading weights"
    assert reason in err
    assert re.search(r" phase loading_weights$", out, re.M) and "READY" not in out
