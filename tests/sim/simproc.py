"""Run the simulator as a real process on 127.0.0.1 and read it as a user would.

The log goes to a file through one descriptor for stdout and stderr, like
`> server.log 2>&1`; it is read back through the Foundation parser
(LogIngest + summarize). HTTP uses only the standard library.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from sgwatch.core.summary import Summary, summarize
from sgwatch.live.ingest import LogIngest

HOST = "127.0.0.1"
READY = b"The server is fired up and ready to roll!"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def sim_env(state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SGLANG_LOG_MS"}
    env["SGWATCH_SIM_STATE"] = str(state)
    return env


class Sim:
    def __init__(
        self, args: list[str], folder: Path, env: dict[str, str], entry: str = "sgwatch.sim"
    ) -> None:
        self.port = free_port()
        self.log_path = folder / f"sim-{self.port}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - lives as long as the process
        argv = ["sim"] if entry == "sgwatch" else []
        cmd = [sys.executable, "-m", entry, *argv, *args, "--host", HOST, "--port", str(self.port)]
        self.proc = subprocess.Popen(
            cmd,
            stdout=self._log,
            stderr=self._log,
            stdin=subprocess.DEVNULL,
            env=env,
            process_group=0,  # its own process group, as a detached server
        )

    # -- the log ----------------------------------------------------------------

    def log(self) -> bytes:
        return self.log_path.read_bytes()

    def wait_for(self, needle: bytes, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.log():
            if self.proc.poll() is not None and needle not in self.log():
                raise AssertionError(f"exited {self.proc.returncode} before {needle!r}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no {needle!r} within {timeout} s")
            time.sleep(0.02)

    def wait_ready(self, timeout: float = 30.0) -> None:
        self.wait_for(READY, timeout)

    def wait_exit(self, timeout: float = 30.0) -> int:
        return self.proc.wait(timeout)

    def summary(self) -> Summary:
        ingest = LogIngest()
        ingest.feed(self.log())
        ingest.flush()
        return summarize(ingest.state)

    # -- HTTP -------------------------------------------------------------------

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
        try:
            data = json.dumps(body).encode() if body is not None else None
            conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def get(self, path: str) -> tuple[int, bytes]:
        return self.request("GET", path)

    def post(self, path: str, body: dict) -> tuple[int, dict]:
        status, data = self.request("POST", path, body)
        return status, json.loads(data)

    def stream(self, path: str, body: dict) -> Iterator[str]:
        """The `data:` payloads of a server-sent-event response, as they arrive."""
        conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
        try:
            conn.request("POST", path, json.dumps(body).encode(), {"Accept": "text/event-stream"})
            resp = conn.getresponse()
            assert resp.status == 200, resp.status
            assert resp.getheader("content-type") == "text/event-stream"
            for raw in resp:
                line = raw.decode().strip()
                if line.startswith("data: "):
                    yield line[6:]
        finally:
            conn.close()

    # -- signals and cleanup -------------------------------------------------------

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill_group()
            self.proc.wait(10)
        self._log.close()
