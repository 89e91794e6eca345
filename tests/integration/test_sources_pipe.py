"""Servers whose output goes into a pipe, launched through SSH as users do
(`CMD 2>&1 | tee FILE`): discovery names the source, `wait` and `events` follow the
file the pipe's reader writes, and a pipe into nothing readable is said to be so."""

from __future__ import annotations

import contextlib
import json
import shlex
import signal
import sys
from pathlib import Path

import pytest

from sgwatch.cli import exitcodes
from sgwatch.sim.common.nvidia_smi import install
from tests.integration.headless import (
    Lines,
    cli_env,
    discovered,
    sgwatch,
    start,
)
from tests.integration.helpers import arun, wait_until
from tests.integration.sshd import free_port

QWEN = ["--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16", "--sim-speed", "50"]


class PipedSims:
    """Simulators started on `gpu129` by a shell pipeline (`sh -c 'SIM 2>&1 | TAIL'`),
    each pipeline in its own session; all killed at the end."""

    def __init__(self, host, ssh, folder: Path) -> None:
        self.host, self.ssh, self.folder = host, ssh, folder
        self.state = folder / "gpu-state"
        install(host.gpu_bin, self.state)
        self.groups: list[int] = []

    def launch(self, tail: str) -> int:
        """The pipeline's process group; `tail` is what the output is piped into."""
        argv = [sys.executable, "-m", "sgwatch.sim", *QWEN, "--port", str(free_port())]
        pipeline = f"{shlex.join(argv)} 2>&1 | {tail}"
        command = (
            f"cd {shlex.quote(str(self.folder))} || exit 1\n"
            f"SGWATCH_SIM_STATE={shlex.quote(str(self.state))} PYTHONUNBUFFERED=1 "
            f"setsid sh -c {shlex.quote(pipeline)} < /dev/null > /dev/null 2>&1 &\n"
            "echo $!\n"
        )

        async def run() -> int:
            t = self.ssh("gpu129")
            await t.connect()
            try:
                return int((await t.run(command, timeout=10)).stdout)
            finally:
                await t.close()

        self.groups.append(arun(run()))
        return self.groups[-1]

    def discovered(self):
        return discovered(self.ssh)

    def stop(self) -> None:
        for group in self.groups:
            with contextlib.suppress(ProcessLookupError):
                self.host.killpg(group, signal.SIGKILL)
        assert wait_until(lambda: not self.host.remote_processes())


@pytest.fixture
def piped(host, ssh, tmp_path):
    sims = PipedSims(host, ssh, tmp_path)
    yield sims
    sims.stop()


def test_a_server_piped_into_tee_is_followed_through_the_file_tee_writes(host, piped, tmp_path):
    log = tmp_path / "serve.log"
    piped.launch(f"tee -a {shlex.quote(str(log))}")
    (server,) = piped.discovered()
    assert (server.source.kind, server.source.label) == ("pipe", f"tee -> {log}")
    assert server.log == str(log) and server.source.problem is None
    assert server.stdout.startswith("pipe:")

    env = cli_env(host, tmp_path / "home")
    done = sgwatch(env, "wait", "gpu129", "--timeout", "120")
    assert done.returncode == exitcodes.OK, done.stderr
    assert "READY" in done.stdout.splitlines()[-1]

    events = Lines(start(env, "events", "gpu129", "--json", "--pid", str(server.pid)))
    live = json.loads(events.until(lambda line: '"state":"live"' in line))
    assert live["source"] == f"gpu129: tee -> {log} (pid {server.pid})"
    events.proc.send_signal(signal.SIGINT)
    assert events.finish()[0] == exitcodes.OK

    # A restart keeps the pipe: the new server runs into `tee -a` the same file.
    restarted = sgwatch(env, "restart", "gpu129", "--set", "mem-fraction-static=0.8", "--yes")
    assert restarted.returncode == exitcodes.OK, restarted.stderr
    (new,) = piped.discovered()
    piped.groups.append(new.pid)
    assert new.pid != server.pid and "--mem-fraction-static" in new.argv
    assert (new.source.kind, new.source.label) == ("pipe", f"tee -> {log}")
    assert "The server is fired up and ready to roll!" in log.read_text()


def test_a_pipe_into_nothing_readable_is_said_to_be_so(host, piped, tmp_path):
    piped.launch("cat > /dev/null")
    (server,) = piped.discovered()
    assert server.source.kind == "pipe" and server.log is None
    assert "goes through `cat` to /dev/null, not into a file" in server.source.problem

    env = cli_env(host, tmp_path / "home")
    done = sgwatch(env, "wait", "gpu129", "--timeout", "30")
    assert done.returncode == exitcodes.NO_SERVER
    assert f"(pid {server.pid}) but its output goes through `cat` to /dev/null" in done.stderr
    assert "pass --log PATH, or relaunch it with `sgwatch launch`" in done.stderr
