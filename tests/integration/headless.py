"""The headless commands as a user runs them: `python -m sgwatch ...` in a shell whose
~/.ssh/config is the test sshd's, against simulators launched detached through SSH."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from sgwatch.cli import exitcodes
from sgwatch.control.controller import Controller
from sgwatch.control.history import History
from sgwatch.core import events as ev
from sgwatch.engines import process_patterns
from sgwatch.live.options import SERVER_CHECK_S, Options
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.remote.discover import discover
from sgwatch.sim.common.nvidia_smi import install
from tests.integration.detached import detached
from tests.integration.helpers import arun, until, wait_until
from tests.integration.sshd import SshdServer, free_port

# A small simulated server: Qwen3-8B, few graph captures, a quick warmup.
QWEN = ("--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16")

CRASH_KV = ("--model-path", "meta-llama/Llama-3.1-70B-Instruct", "--tp", "2")
CRASH_KV += ("--mem-fraction-static", "0.4", "--sim-format", "0.5.23")


def cli_env(
    host: SshdServer, home: Path, extra_config: str = "", trust: bool = True
) -> dict[str, str]:
    """A HOME whose ~/.ssh/config is the fixture's (plus `extra_config`), whose
    ~/.ssh/known_hosts holds the sshd's key (`trust`) or nothing, and no sgwatch config."""
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    (home / ".ssh" / "config").write_text(host.ssh_config.read_text() + "\n" + extra_config)
    (home / ".ssh" / "known_hosts").write_text(host.host_key_line() if trust else "")
    env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "XDG_CONFIG_HOME")}
    return {**env, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


def sgwatch(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sgwatch", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def restarted(
    host: SshdServer, env: dict[str, str], out: list[str], old: int, folder: Path, ready: bytes
) -> int:
    """The new server's pid, after `restart --yes` printed `out` for the server `old` whose
    log was folder/server.log: READY last, the old server gone and the new one running,
    the old run's log kept beside (with its `ready` line), the new run in the history."""
    assert "READY" in out[-1]
    new = int(next(x for x in out if x.startswith("restarted: pid ")).split()[2].rstrip(";"))
    assert not host.alive(old) and host.alive(new)
    kept = [p for p in folder.iterdir() if p.name.startswith("server.log.")]
    assert len(kept) == 1 and ready in kept[0].read_bytes()
    history = Path(env["XDG_STATE_HOME"], "sgwatch", "history", "gpu129.jsonl").read_text()
    assert f'"pid":{new}' in history and '"outcome":"ready"' in history
    return new


def start(env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "sgwatch", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


class SimHost:
    """Simulated servers started on the `gpu129` host (with the nvidia-smi stand-in),
    each in its own process group, all killed at the end."""

    def __init__(self, host: SshdServer, ssh, folder: Path) -> None:
        self.host, self.ssh, self.folder = host, ssh, folder
        self.state = folder / "gpu-state"
        install(host.gpu_bin, self.state)
        self.pids: list[int] = []  # as the host numbers them

    def launch(self, log: Path, *args: str, speed: str = "50") -> int:
        """Start `python -m sgwatch.sim ARGS` writing to `log`; returns its port."""
        port = free_port()
        argv = [sys.executable, "-m", "sgwatch.sim", *args, "--port", str(port)]
        argv += ["--host", "127.0.0.1", "--sim-speed", speed, "--sim-seed", "7"]

        async def run() -> int:
            t = self.ssh("gpu129")
            await t.connect()
            try:
                env = {"SGWATCH_SIM_STATE": str(self.state)}
                r = await t.run(detached(argv, str(self.folder), str(log), env), timeout=10)
            finally:
                await t.close()
            return int(r.stdout)

        self.pids.append(arun(run()))
        return port

    def stop(self) -> None:
        for pid in self.pids:
            with contextlib.suppress(ProcessLookupError):
                self.host.killpg(pid, signal.SIGKILL)
        assert wait_until(lambda: not any(self.host.alive(p) for p in self.pids))


def generate(port: int, tokens: int = 64) -> dict:
    """One plain request to a simulated server, as a client would send it."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = {"text": "Say hello.", "sampling_params": {"max_new_tokens": tokens}}
    conn.request("POST", "/generate", json.dumps(body), {"Content-Type": "application/json"})
    doc = json.loads(conn.getresponse().read())
    conn.close()
    return doc


class Lines:
    """A running command's stdout, line by line, read on a thread."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.seen: list[str] = []
        self._q: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._q.put(line.rstrip("\n"))
        self._q.put(None)

    def until(self, found, timeout: float = 60) -> str:
        """Read on until a line satisfies `found`; return it."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"not seen within {timeout} s; got {self.seen[-20:]}"
            try:
                line = self._q.get(timeout=left)
            except queue.Empty:
                continue
            assert line is not None, f"the command ended; got {self.seen[-20:]}"
            self.seen.append(line)
            if found(line):
                return line

    def finish(self, timeout: float = 120) -> tuple[int, str, str]:
        """Wait for the command to end: its status, all its stdout, its stderr."""
        status = self.proc.wait(timeout)
        while (line := self._q.get(timeout=timeout)) is not None:
            self.seen.append(line)
        return status, "\n".join(self.seen), self.proc.stderr.read()


def discovered(ssh, alias: str = "gpu129") -> list:
    """The servers discovery finds on the host, once it finds any (30 s at most)."""

    async def look():
        t = ssh(alias)
        await t.connect()
        try:
            return await discover(t, process_patterns())
        finally:
            await t.close()

    return wait_until(lambda: arun(look()).servers, timeout=30)


def ready_and_followed(env: dict[str, str], source: str) -> None:
    """`wait` reports the server ready, and `events` follows it through `source` (as the
    header says it), its past read as the state of now."""
    done = sgwatch(env, "wait", "gpu129", "--timeout", "120")
    assert done.returncode == exitcodes.OK, done.stderr
    assert "READY" in done.stdout.splitlines()[-1]
    events = Lines(start(env, "events", "gpu129", "--json"))
    try:
        live = json.loads(events.until(lambda line: '"state":"live"' in line))
        assert live["source"] == f"gpu129: {source}"
        phase = json.loads(events.until(lambda line: '"event":"phase"' in line))
        assert phase["state"] == "ready"
    finally:
        events.proc.send_signal(signal.SIGINT)
        assert events.finish()[0] == exitcodes.OK


# The restart tests' simulated server: a secret in its environment, and the states it is up in.
SECRET = "hf_s3cr3t_value"
UP = (ev.READY, ev.SERVING)


def sim_argv(*extra: str, speed: float = 100) -> list[str]:
    """A simulated Qwen3-8B server's command on a free port."""
    return [
        sys.executable,
        "-m",
        "sgwatch.sim",
        "--model-path",
        "Qwen/Qwen3-8B",
        "--port",
        str(free_port()),
        "--sim-speed",
        f"{speed:g}",
        *extra,
    ]


class Rig:
    """A simulated server launched detached through SSH, and a session watching it."""

    def __init__(self, host, ssh, tmp_path: Path, argv: list[str] | None = None) -> None:
        state = tmp_path / "gpu-state"
        install(host.gpu_bin, state)
        self.cwd = tmp_path / "run"
        self.cwd.mkdir()
        self.log = self.cwd / "server.log"
        self.env = {"HF_TOKEN": SECRET, "RUN_TAG": "t1", "SGWATCH_SIM_STATE": str(state)}
        self.argv = argv or sim_argv()
        self.host, self.ssh = host, ssh
        self.history = History("gpu129", tmp_path / "history")
        self.pids: list[int] = []  # as the host numbers them

    async def start(
        self, check_every: float = SERVER_CHECK_S
    ) -> tuple[Session, Controller, asyncio.Task]:
        t = self.ssh("gpu129")
        await t.connect()
        r = await t.run(detached(self.argv, str(self.cwd), str(self.log), self.env), timeout=10)
        await t.close()
        self.pids.append(int(r.stdout))
        # pid: other servers may run on this host (other tests); watch ours
        session = Session(
            Watch("gpu129"),
            lambda: self.ssh("gpu129"),
            pid=self.pids[-1],
            options=Options(check_every=check_every),
        )
        task = asyncio.create_task(session.run())
        await until(lambda: session.watch.state.state in UP)
        ctl = Controller(session, self.history)
        return session, ctl, task

    def cleanup(self) -> None:
        for pid in self.pids:
            if self.host.alive(pid):
                self.host.killpg(pid, signal.SIGKILL)
        assert wait_until(lambda: not any(self.host.alive(p) for p in self.pids))
