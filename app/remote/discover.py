"""Find the inference servers on a host in one round trip.

    found = await discover(transport, engines.process_patterns())
    found.servers   one ServerProcess per running server (none, one, or several to pick from)
    found.gpus      from `nvidia-smi -L`; found.gpu_error says why there are none
    found.recent    with none running and `recent` asked for: logs of servers that
                    are gone, written in the last hour (host/recent.py)

The host side is host/python.sh, which finds a Python, and host/discover.py run
by it, both sent over stdin with the engines' process patterns: the words of their
command lines as the shell's arguments, the patterns in the program's request.
Secrets in the servers' environments are masked on the host.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

from sgwatch.core.gpu import GpuSample, parse_gpu_list
from sgwatch.remote.hostprogram import program
from sgwatch.transport.base import Transport

_FIND_PYTHON = files("sgwatch.remote.host").joinpath("python.sh").read_text()
_END = "SGWATCH_END_OF_PROGRAM"
_EXECUTABLE = """exec "$py" -c 'import sys; print(sys.executable)'\n"""  # as discovery names it
_WORD = re.compile(r"[\w.-]+")  # a plain word of a command line: module, launcher


# Where people put a server's log (a shell's working folder is looked at too), and
# how host/recent.py looks there: the last hour, a file's first 8 KiB to recognise
# it, its last 16 KiB to tell its state, the newest 1,000 recent files read (50 of them
# whatever the time), 10 logs answered, and the scan cut at 0.8 s (docs/PERFORMANCE.md).
PLACES = ("~", "/tmp", "/var/tmp")
_GONE = {
    "within": 3600,
    "head": 8192,
    "tail": 16384,
    "reads": 1000,
    "sure": 50,
    "most": 10,
    "budget": 0.8,
}


def gone_logs(
    markers: Sequence[tuple[str, Sequence[str]]], places: Sequence[str] = PLACES
) -> dict[str, Any]:
    """The request for the logs of servers that are gone: `markers`, each engine's name
    and the pieces of lines only it prints (its first lines tell a log), in the order
    the engines are asked; `places`, the folders to look in besides the shells'."""
    engines = [[name, list(pieces)] for name, pieces in markers]
    return {**_GONE, "engines": engines, "places": list(places)}


def script(
    patterns: Sequence[dict[str, Any]],
    logs: Sequence[str] = (),
    recent: dict[str, Any] | None = None,
) -> str:
    """sh: python.sh, then host/discover.py run by the Python it found, the patterns,
    the past logs to look at and how to look for the logs of servers that are gone
    (`gone_logs`; None: not looked for) in its request."""
    request = {"patterns": list(patterns), "logs": list(logs), "recent": recent}
    return run_by_found_python(program("sgwatch.remote.host.discover", request))


def run_by_found_python(sent: str) -> str:
    """sh: python.sh, then the program `sent` run by the Python it found."""
    return f"{_FIND_PYTHON}exec \"$py\" - <<'{_END}'\n{sent.rstrip()}\n{_END}\n"


def shell(patterns: Sequence[dict[str, Any]]) -> str:
    """The command that reads a script from stdin: `sh -s`, given as its arguments the
    words a running server's argv holds, where python.sh looks for its Python."""
    words = {(p["module"] or "").split(".")[0] for p in patterns}
    words |= {p["launcher"][0] for p in patterns if p["launcher"]}
    plain = sorted(w for w in words if _WORD.fullmatch(w)) or ["python"]
    return f"exec /bin/sh -s -- {shlex.join(plain)}"


class DiscoveryFailed(Exception):
    pass


@dataclass(frozen=True, slots=True)
class LogSource:
    """Where a server's output can be read (host/discover.py's log_source)."""

    kind: str  # file | pipe | tmux | screen | docker | journald | terminal | none
    label: str  # for the user: "/srv/server.log", "tee -> /root/serve.log", "tmux main:1.0"
    path: str | None = None  # the file to follow (file, pipe into tee, logged screen)
    problem: str | None = None  # why there is nothing to follow, and what to do instead
    detail: dict[str, Any] = field(default_factory=dict)  # pane, container, unit, ...


@dataclass(frozen=True, slots=True)
class ServerProcess:
    pid: int
    pgid: int
    start_time: int  # clock ticks after boot: with pid, tells a restarted server apart
    engine: str  # the engines registry's name: engines.by_name(server.engine)
    kind: str  # how it was launched: launch_server | serve | sim
    argv: list[str]
    user: str | None
    cwd: str | None
    env: dict[str, str] | None  # secrets masked; None when not readable (env_error says why)
    env_error: str | None
    stdin: str | None
    stdout: str | None  # what /proc/PID/fd/1 points to
    stderr: str | None
    log: str | None  # the file its output reaches: written directly, or by a pipe's reader
    log_deleted: bool
    interpreter: str | None
    engine_version: str | None  # the engine's package as installed for that interpreter
    source: LogSource | None = None  # None: a file, `log` (a server described by sgwatch)
    started_at: float | None = None  # seconds since the epoch, the host's clock


@dataclass(frozen=True, slots=True)
class PastLog:
    """A log a server wrote before (discover's `logs`), as it is on the host now."""

    path: str
    mtime: float  # last written, seconds since the epoch (the host's clock)
    size: int


@dataclass(frozen=True, slots=True)
class GoneLog:
    """A log written in the last hour by a server that no longer runs (host/recent.py)."""

    path: str
    mtime: float  # last written, seconds since the epoch (the host's clock)
    size: int
    engine: str  # whose markers its first lines hold: engines.by_name(log.engine)
    tail: str  # its last bytes, from a line's start: what state it ended in


@dataclass(frozen=True, slots=True)
class Discovery:
    hostname: str
    python: str  # the host's Python that ran discovery: use it for the log follower
    servers: list[ServerProcess] = field(default_factory=list)
    gpus: list[GpuSample] = field(default_factory=list)
    gpu_error: str | None = None
    logs: list[PastLog] = field(default_factory=list)  # of those asked for, those that exist
    now: float = 0.0  # the host's clock when it answered
    recent: list[GoneLog] = field(default_factory=list)  # newest first; asked for, none running
    recent_cut: bool = False  # the look for them took its whole budget: some places unseen


async def host_python(
    transport: Transport, patterns: Sequence[dict[str, Any]], timeout: float = 60.0
) -> str:
    """The Python discovery would run with (python3 on PATH, else a running server's),
    found by python.sh alone: what a launch needs of the host."""
    find = _FIND_PYTHON + _EXECUTABLE
    r = await transport.run(shell(patterns), input=find.encode(), timeout=timeout)
    text = r.stdout.decode("utf-8", "replace").strip()
    if text.startswith("{"):  # python.sh's own error
        raise DiscoveryFailed(f"{transport.label}: {json.loads(text)['error']}")
    return text


async def discover(
    transport: Transport,
    patterns: Sequence[dict[str, Any]],
    timeout: float = 60.0,
    logs: Sequence[str] = (),
    recent: dict[str, Any] | None = None,
) -> Discovery:
    """`patterns`: engines.process_patterns(), what a server looks like on the host;
    `logs`: logs servers wrote before, looked at in the same round trip; `recent`
    (gone_logs()): with no server running, look for the logs of servers that are gone."""
    text_in = script(patterns, logs, recent).encode()
    r = await transport.run(shell(patterns), input=text_in, timeout=timeout)
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
        servers=[
            ServerProcess(**{**s, "source": LogSource(**s["source"])}) for s in data["servers"]
        ],
        gpus=parse_gpu_list(data["gpus"] or ""),
        gpu_error=data["gpu_error"],
        logs=[PastLog(**log) for log in data["logs"]],
        now=data["now"],
        recent=[GoneLog(**log) for log in (data["recent"] or {}).get("logs", [])],
        recent_cut=bool((data["recent"] or {}).get("cut")),
    )
