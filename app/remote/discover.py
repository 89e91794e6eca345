"""Find the SGLang server(s) on a host in one round trip.

    found = await discover(transport)
    found.servers   one ServerProcess per running server (none, one, or several to pick from)
    found.gpus      from `nvidia-smi -L`; found.gpu_error says why there are none

The host side is discover.sh + host_discover.py, sent over stdin; secrets in
the servers' environments are masked on the host.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib.resources import files

from sgwatch.core.gpu import GpuSample, parse_gpu_list
from sgwatch.transport.base import Transport

_REMOTE = files("sgwatch.remote")
SCRIPT = (
    _REMOTE.joinpath("discover.sh")
    .read_text()
    .replace("@PROGRAM@", _REMOTE.joinpath("host_discover.py").read_text().rstrip("\n"))
)


class DiscoveryFailed(Exception):
    pass


@dataclass(frozen=True, slots=True)
class ServerProcess:
    pid: int
    pgid: int
    start_time: int  # clock ticks after boot: with pid, tells a restarted server apart
    kind: str  # launch_server | serve | sim
    argv: list[str]
    user: str | None
    cwd: str | None
    env: dict[str, str] | None  # secrets masked; None when not readable (env_error says why)
    env_error: str | None
    stdin: str | None
    stdout: str | None  # what /proc/PID/fd/1 points to
    stderr: str | None
    log: str | None  # the regular file stdout or stderr writes to
    log_deleted: bool
    interpreter: str | None
    sglang_version: str | None


@dataclass(frozen=True, slots=True)
class Discovery:
    hostname: str
    python: str  # the host's Python that ran discovery: use it for the log follower
    servers: list[ServerProcess] = field(default_factory=list)
    gpus: list[GpuSample] = field(default_factory=list)
    gpu_error: str | None = None


async def discover(transport: Transport, timeout: float = 60.0) -> Discovery:
    r = await transport.run("exec /bin/sh -s", input=SCRIPT.encode(), timeout=timeout)
    text = r.stdout.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        why = (r.stderr.decode("utf-8", "replace").strip().splitlines() or [text[:200]])[-1]
        raise DiscoveryFailed(f"{transport.label}: discovery failed: {why}") from None
    if "error" in data:
        raise DiscoveryFailed(f"{transport.label}: {data['error']}")
    return Discovery(
        hostname=data["hostname"],
        python=data["python"],
        servers=[ServerProcess(**s) for s in data["servers"]],
        gpus=parse_gpu_list(data["gpus"] or ""),
        gpu_error=data["gpu_error"],
    )
