"""Servers in a Docker container or a systemd unit, on a host where the real tools
cannot run (no Docker engine, no systemd): stand-ins on the host's PATH
(tests/integration/standins/: `docker run/ps/logs`, `systemd-run`, `journalctl`) put
the server in the container's or the unit's cgroup and record its output as dockerd
and journald do. sgwatch finds the source from /proc/PID/cgroup and follows
`docker logs --follow` / `journalctl -u UNIT -f -o cat` from the server's start."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sgwatch.cli import exitcodes
from sgwatch.remote.hostprogram import program
from sgwatch.sim.common.nvidia_smi import install
from tests.integration.headless import (
    cli_env,
    discovered,
    ready_and_followed,
    sgwatch,
)
from tests.integration.helpers import arun, wait_until
from tests.integration.sshd import free_port

STANDINS = Path(__file__).parent / "standins"
QWEN = ["--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16", "--sim-speed", "50"]


class Standins:
    """The stand-ins on `gpu129`'s PATH, their state, and what they started."""

    def __init__(self, host, ssh, folder: Path) -> None:
        self.host, self.ssh = host, ssh
        self.sim_state = folder / "gpu-state"
        install(host.gpu_bin, self.sim_state)
        for tool in STANDINS.iterdir():
            if tool.is_file():
                shutil.copy2(tool, host.gpu_bin / tool.name)
        self.state = host.gpu_bin / "standin-state"

    def run(self, *argv: str) -> str:
        async def go() -> str:
            t = self.ssh("gpu129")
            await t.connect()
            try:
                r = await t.run(" ".join(argv), timeout=20)
            finally:
                await t.close()
            assert r.exit_status == 0, r.stderr
            return r.stdout.decode().strip()

        return arun(go())

    def server(self) -> list[str]:
        port = str(free_port())
        return [sys.executable, "-m", "sgwatch.sim", *QWEN, "--port", port]

    def discovered(self):
        return discovered(self.ssh)

    def stop(self) -> None:
        for record in self.state.glob("*.json") if self.state.exists() else []:
            doc = json.loads(record.read_text())
            if "supervisor" in doc and "exited" not in doc:
                with contextlib.suppress(ProcessLookupError):
                    self.host.killpg(doc["supervisor"], signal.SIGKILL)
        assert wait_until(lambda: not self.host.remote_processes())
        shutil.rmtree(self.state, ignore_errors=True)


@pytest.fixture
def standins(host, ssh, tmp_path):
    if not any(
        Path(p, "cgroup.procs").exists() for p in ("/sys/fs/cgroup/systemd", "/sys/fs/cgroup")
    ):
        pytest.skip("no cgroup hierarchy to put a stand-in container or unit in")
    s = Standins(host, ssh, tmp_path)
    yield s
    s.stop()


def test_a_server_in_a_docker_container_is_followed_through_docker_logs(host, standins, tmp_path):
    env = f"SGWATCH_SIM_STATE={standins.sim_state}"
    labels = "--label com.docker.compose.service=qwen "
    labels += "--label com.docker.compose.project.config_files=/srv/qwen/compose.yaml"
    container = standins.run(
        "docker run -d --name sglang-qwen", labels, "-e", env, "lmsysorg/sglang", *standins.server()
    )
    (server,) = standins.discovered()
    assert (server.source.kind, server.source.label) == ("docker", "docker sglang-qwen"), server
    assert server.source.detail["container"] == container
    assert server.source.detail["compose_service"] == "qwen"
    assert server.source.problem is None and server.log is None

    cli = cli_env(host, tmp_path / "home")
    ready_and_followed(cli, f"docker sglang-qwen (pid {server.pid})")

    # A container is its owner's to change: the edited command and where it must go.
    edit = sgwatch(cli, "restart", "gpu129", "--set", "mem-fraction-static=0.8", "--yes")
    assert edit.returncode != exitcodes.OK
    assert "the server runs in Docker container sglang-qwen: put `" in edit.stderr
    assert "--mem-fraction-static 0.8" in edit.stderr
    assert "in the service 'qwen' in /srv/qwen/compose.yaml, then `docker compose up -d qwen`" in (
        edit.stderr
    )
    assert host.alive(server.pid)  # untouched
    # The same flags: docker restart, as the container's owner would.
    same = sgwatch(cli, "restart", "gpu129", "--yes")
    assert same.returncode == exitcodes.OK, same.stderr
    assert "READY" in same.stdout.splitlines()[-1]
    (new,) = standins.discovered()
    assert new.pid != server.pid and new.source.detail["container"] == container


def test_a_user_who_may_not_run_docker_is_told_so(host, standins, tmp_path):
    env = f"SGWATCH_SIM_STATE={standins.sim_state}"
    standins.run("docker run -d --name sglang-qwen -e", env, "lmsysorg/sglang", *standins.server())
    (standins.state / "deny").touch()
    cli = cli_env(host, tmp_path / "home")
    done = sgwatch(cli, "wait", "gpu129", "--timeout", "60")
    assert done.returncode == exitcodes.NO_SERVER
    assert "it runs in Docker container" in done.stderr
    assert "may not run docker (permission denied while trying to connect" in done.stderr
    (standins.state / "deny").unlink()


def test_a_systemd_unit_is_followed_through_its_journal(host, standins, tmp_path):
    env = f"SGWATCH_SIM_STATE={standins.sim_state}"
    standins.run("systemd-run --unit=sglang -E", env, *standins.server())
    (server,) = standins.discovered()
    assert (server.source.kind, server.source.label) == ("journald", "journal sglang.service")
    assert server.stdout.startswith("socket:")

    cli = cli_env(host, tmp_path / "home")
    done = sgwatch(cli, "wait", "gpu129", "--timeout", "120")
    assert done.returncode == exitcodes.OK, done.stderr
    assert "READY" in done.stdout.splitlines()[-1]

    edit = sgwatch(cli, "restart", "gpu129", "--set", "mem-fraction-static=0.8", "--yes")
    assert edit.returncode != exitcodes.OK
    assert "the server runs as the systemd unit sglang.service: put `" in edit.stderr
    assert "(`systemctl edit --full sglang.service`), then `systemctl restart" in edit.stderr
    assert host.alive(server.pid)
    same = sgwatch(cli, "restart", "gpu129", "--yes")  # the same flags: systemctl restart
    assert same.returncode == exitcodes.OK, same.stderr
    (new,) = standins.discovered()
    assert new.pid != server.pid and new.source.label == "journal sglang.service"


def frames(argv: list[str], want: int) -> tuple[list[dict], bytes]:
    """Run the host side of a stream follower here until it sent `want` bytes of log:
    its events and the bytes."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    events, data, buf = [], b"", b""
    try:
        while len(data) < want:
            chunk = proc.stdout.read1(1 << 16)
            assert chunk, "the follower ended"
            buf += chunk
            while len(buf) >= 5 and len(buf) >= 5 + int.from_bytes(buf[1:5], "big"):
                n = int.from_bytes(buf[1:5], "big")
                kind, payload, buf = buf[:1], buf[5 : 5 + n], buf[5 + n :]
                if kind == b"D":
                    data += payload
                else:
                    events.append(json.loads(payload))
    finally:
        proc.kill()
        proc.wait()
    return events, data


def test_a_stream_resumed_after_a_drop_sends_each_byte_once(tmp_path):
    """What a reconnect asks of host/stream.py: the log command runs again and only the
    bytes not read before come, once its first bytes are the same; else it is another
    log, read from its start."""
    log = tmp_path / "container.log"
    log.write_bytes(b"".join(b"line %d\n" % i for i in range(5000)))
    whole = log.read_bytes()
    command = ["cat", str(log)]

    def stream(offset: int, ident: str | None, head: bytes) -> list[str]:
        sha = hashlib.sha256(head).hexdigest() if head else None
        request = {"offset": offset, "ident": ident, "head_len": len(head), "head_sha": sha}
        sent = program("sgwatch.remote.host.stream", {**request, "command": command})
        return [sys.executable, "-c", sent]

    events, first = frames(stream(0, None, b""), len(whole))
    assert first == whole and events[0]["reason"] == "start"
    ident, cut = events[0]["ident"], 12345  # what the client had read when the link dropped
    resume = stream(cut, ident, whole[:1024])
    events, rest = frames(resume, len(whole) - cut)
    assert (events[0]["reason"], events[0]["offset"]) == ("resume", cut)
    assert rest == whole[cut:]  # nothing lost, nothing twice
    log.write_bytes(b"another run\n" + whole)
    events, again = frames(resume, len(whole) + 12)
    assert [e["reason"] for e in events][-1] == "replaced"
    assert again == log.read_bytes()
