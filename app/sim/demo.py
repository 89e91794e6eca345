"""`sgwatch --demo`: a simulated SGLang server on this machine, with a little traffic.

Starts the simulator (a Qwen-27B, TP-2 warmup with piecewise CUDA graphs,
time compressed so the whole start-up takes under a minute; with `--engine
vllm`, a `vllm serve` of a Qwen3-32B on TP-2: weights, torch.compile, KV cache,
PIECEWISE and FULL CUDA-graph captures) as a local child
writing its log to a temporary folder, with the nvidia-smi stand-in first on
its PATH (and on the PATH of the local commands that watch it: `commands_env`,
never sgwatch's own environment), and once the server is ready sends a few
streaming requests to it on 127.0.0.1 so the throughput panel has something to
show. Everything it starts dies with it, even when sgwatch is SIGKILLed: every server
started from the demo's environment (the first, and each a restart from the flag panel
launches) waits for sgwatch's end, then removes the folder and itself
(sim/common/proctree.outlive_no_owner).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sgwatch.sim.common.nvidia_smi import install
from sgwatch.sim.common.proctree import DEMO_PREFIX, OWNER, die_with, owner, start_time

ENGINES = ("sglang", "vllm")  # what `--demo --engine` may name; the first is the default
MODEL = "Qwen/Qwen3.6-27B"
VLLM_MODEL = "Qwen/Qwen3-32B"
SPEED = 3.0  # simulated seconds per real second
GPUS = 2
REQUEST_EVERY_S = 1.5
MAX_IN_FLIGHT = 3
OWNER_FILE = "owner"  # in the demo's folder: its OWNER value, for sweep_orphans
UNOWNED_AGE_S = 24 * 3600  # a folder with no OWNER_FILE, untouched this long, is left over


@dataclass
class Demo:
    folder: Path
    log: Path
    port: int
    env: dict[str, str]  # the server's: PATH with the nvidia-smi stand-in first
    proc: subprocess.Popen[bytes]
    engine: str = ENGINES[0]

    @property
    def commands_env(self) -> dict[str, str]:
        """What the local commands that watch the demo need on top of sgwatch's own
        environment: the stand-in nvidia-smi first on PATH, and its GPU state."""
        return {k: self.env[k] for k in ("PATH", "SGWATCH_SIM_STATE", "SGWATCH_SIM_GPUS")}

    def kill(self, restarted: int | None = None) -> None:
        """SIGKILL the server's group and a restarted one's, at once, and remove the
        folder (sgwatch is going: its servers' own watch, killed here, cannot)."""
        for pgid in {self.proc.pid, restarted} - {None}:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
        shutil.rmtree(self.folder, ignore_errors=True)

    def stop(self, restarted: int | None = None) -> None:
        """End the server's process group, and the group of the server a restart put in
        its place, at once: a simulated server has nothing to drain (SIGTERM would take
        its 5 simulated seconds of draining, ~1.7 s at the demo's speed); then remove the
        folder."""
        if restarted is not None and restarted != self.proc.pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(restarted, signal.SIGKILL)
            _gone(restarted)
        if self.proc.poll() is None:  # not reaped: its pid still names its group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def start_demo(speed: float = SPEED, engine: str = ENGINES[0]) -> Demo:
    sweep_orphans(Path(tempfile.gettempdir()))
    folder = Path(tempfile.mkdtemp(prefix=DEMO_PREFIX))
    state = folder / "gpu-state"
    install(folder / "bin", state=state)
    env = dict(os.environ)
    env["PATH"] = f"{folder / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["SGWATCH_SIM_STATE"] = str(state)
    env["SGWATCH_SIM_GPUS"] = str(GPUS)
    env[OWNER] = owner(os.getpid(), folder)
    (folder / OWNER_FILE).write_text(env[OWNER])
    port = _free_port()
    argv = [
        sys.executable, "-m", "sgwatch.sim",
        "--model-path", MODEL, "--tp", str(GPUS), "--enforce-piecewise-cuda-graph",
        "--host", "127.0.0.1", "--port", str(port), "--sim-speed", str(speed),
    ]  # fmt: skip
    if engine == "vllm":
        argv = [
            sys.executable, "-m", "sgwatch.sim", "vllm", "serve", VLLM_MODEL,
            "--tensor-parallel-size", str(GPUS),
            "--host", "127.0.0.1", "--port", str(port), "--sim-speed", str(speed),
        ]  # fmt: skip
    log = folder / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=env, cwd=folder, start_new_session=True, preexec_fn=_die_with(os.getpid()),
        )  # fmt: skip
    return Demo(folder, log, port, env, proc, engine)


def sweep_orphans(tmp: Path) -> None:
    """Remove this user's demo folders whose sgwatch is gone. Its server removes the
    folder when sgwatch ends, but not when both die in the server's first ~0.3 s (a
    SIGKILL then: the kernel ends the server too, before it can): the next demo does.
    A folder without an owner record (left by a version before it, or one being made
    right now) is removed once nothing in it changed for UNOWNED_AGE_S: a demo still
    running writes its log all along."""
    for folder in tmp.glob(DEMO_PREFIX + "*"):
        with contextlib.suppress(OSError, ValueError):
            if folder.stat().st_uid != os.getuid():
                continue
            if (folder / OWNER_FILE).exists():
                pid, start, _ = (folder / OWNER_FILE).read_text().split(":", 2)
                gone = str(start_time(int(pid))) != start
            else:
                touched = max(p.lstat().st_mtime for p in [folder, *folder.iterdir()])
                gone = time.time() - touched > UNOWNED_AGE_S
            if gone:
                shutil.rmtree(folder, ignore_errors=True)


async def traffic(demo: Demo) -> None:
    """Streaming requests at a gentle pace while the server is up, whichever server that
    is (a restart from the flag panel replaces it on the same port); until cancelled."""
    in_flight: set[asyncio.Task[bool]] = set()
    up = {"now": False}

    def finished(task: asyncio.Task[bool]) -> None:
        in_flight.discard(task)
        if not task.cancelled() and not task.result():
            up["now"] = False  # refused or gone: wait for /health again

    n = 0
    while True:
        if not up["now"]:
            up["now"] = await _healthy(demo.port)
            if not up["now"]:
                await asyncio.sleep(1.0)
                continue
        if len(in_flight) < MAX_IN_FLIGHT:
            n += 1
            task = asyncio.create_task(_generate(demo, n))
            in_flight.add(task)
            task.add_done_callback(finished)
        await asyncio.sleep(REQUEST_EVERY_S)


async def _healthy(port: int) -> bool:
    status, _ = await _http(port, "GET", "/health", None)
    return status == 200


async def _generate(demo: Demo, n: int) -> bool:
    text = f"Write a short Python function number {n} that reverses a list."
    tokens = 160 + 40 * (n % 4)
    if demo.engine == "vllm":  # the OpenAI API: vLLM has no native /generate
        path = "/v1/chat/completions"
        body = {"messages": [{"role": "user", "content": text}], "max_tokens": tokens}
    else:
        path = "/generate"
        body = {"text": text, "sampling_params": {"max_new_tokens": tokens}}
    status, _ = await _http(demo.port, "POST", path, {**body, "stream": True})
    return status == 200


async def _http(port: int, method: str, path: str, body: dict | None) -> tuple[int, bytes]:
    """A minimal HTTP/1.1 exchange with the local server; (0, b"") when it is not up."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return 0, b""
    data = b"" if body is None else json.dumps(body).encode()
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    )
    try:
        writer.write(head.encode() + data)
        await writer.drain()
        reply = await reader.read()
    except OSError:
        return 0, b""
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    status_line = reply.split(b"\r\n", 1)[0].split()
    status = int(status_line[1]) if len(status_line) > 1 and status_line[1].isdigit() else 0
    return status, reply


def _die_with(parent: int):
    """The child's preexec: die with `parent` (proctree.die_with), or at once if it is gone."""

    def arm() -> None:
        if not die_with(parent):
            os._exit(1)

    return arm


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gone(pgid: int, within: float = 5.0) -> None:
    """Wait until a SIGKILLed process group is gone (a restarted server is no child)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
