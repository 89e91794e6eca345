"""The restart protocol (docs/design/architecture.md): preflight, then stop, keep, launch.

    problems = await preflight(transport, engine, interpreter, new_cmd, catalog)
    launched = await restart(transport, python, RestartRequest(...))

Both send a program over stdin (app/remote/host/preflight.py, host/restart.py)
with the request written into it (remote/hostprogram.py), so nothing (an
environment with secrets, a value with `; rm -rf ~` in it) passes through a shell
or shows in a process listing. The argv reaches the server as a list: every value
stays one literal argument.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from dataclasses import dataclass, field

from sgwatch.core.cmdline import LaunchCommand, masked
from sgwatch.engines import Catalog, Engine, Problem
from sgwatch.remote.discover import LogSource, ServerProcess
from sgwatch.remote.hostprogram import program
from sgwatch.transport.base import Transport
from sgwatch.transport.errors import TransportError

PREFLIGHT = "sgwatch.remote.host.preflight"
RESTART = "sgwatch.remote.host.restart"
PANE = "sgwatch.remote.host.pane_restart"
SERVICE = "sgwatch.remote.host.service_restart"


class RestartFailed(Exception):
    """The restart stopped at `stage`; `message` is the line to show."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage
        self.message = message


@dataclass(frozen=True, slots=True)
class Preflight:
    problems: list[Problem]
    checked_by: str  # whose parser judged ("the host's SGLang parser"), or why only the catalog

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.level == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True, slots=True)
class RestartRequest:
    argv: list[str]  # what to launch, without env assignments
    log: str  # where it writes; the old file there is renamed aside first
    pid: int | None  # the running server (None: nothing to stop)
    start_time: int | None  # with pid, its identity: a recycled pid is never signalled
    cwd: str | None = None  # None: the running server's
    env: dict[str, str] | None = field(default=None, repr=False)  # None: the running server's
    require_running: bool = True  # refuse when pid is no longer that server
    grace_s: float = 30.0  # SIGTERM -> SIGKILL
    gpu_wait_s: float = 120.0  # for the GPU memory to be released
    mode: str = "restart"  # or "stop", or "launch" (after a stop): see host/restart.py
    # No server to take after (hosts.NAME.launch): the login's env and home; log "": the
    # host picks one under its state directory.
    first: bool = False
    tee: bool = False  # its output through `tee -a log`, as the server it replaces


@dataclass(frozen=True, slots=True)
class Launched:
    pid: int
    start_time: int | None
    cwd: str
    kept: str | None  # where the old log went
    stopped: list[int]  # pids stopped (the server and its children)
    forced: bool  # SIGKILL was needed
    env: dict[str, str] | None = field(repr=False)  # as launched: kept in memory only
    log: str = ""  # where it writes


@dataclass(frozen=True, slots=True)
class Stopped:
    stopped: list[int]
    forced: bool
    cwd: str
    env: dict[str, str] | None = field(repr=False)  # to launch the next one with


def by_source(source: LogSource | None, new: LaunchCommand) -> str | None:
    """Why a server started this way is not restarted by sgwatch (None: it is), with the
    edited command and where it must go: a container or a unit is its owner's to change,
    never changed behind the user's back; a terminal other than a tmux pane is not
    typed into (restart_in_pane types into the pane)."""
    if source is None:
        return None
    command = masked(new).shell
    detail = source.detail
    if source.kind == "docker":
        where = (
            f"the service {detail['compose_service']!r} in {detail['compose_files']}, then "
            f"`docker compose up -d {detail['compose_service']}`"
            if detail.get("compose_service")
            else "the container's command (docker run ... IMAGE CMD), then recreate it"
        )
        name = detail.get("name") or detail["container"][:12]
        return f"the server runs in Docker container {name}: put `{command}` in {where}"
    if source.kind == "journald":
        unit = detail["unit"]
        return (
            f"the server runs as the systemd unit {unit}: put `{command}` in its ExecStart= "
            f"(`systemctl edit --full {unit}`), then `systemctl restart {unit}`"
        )
    if source.kind in ("screen", "terminal"):
        return (
            f"the server runs in a terminal ({source.label}): sgwatch does not type into it; "
            f"stop it there and run `{command}`"
        )
    return None


async def restart_in_pane(
    transport: Transport,
    python: str,
    server: ServerProcess,
    new: LaunchCommand,
    grace_s: float = 30.0,
) -> Launched:
    """Restart the server in its tmux pane as its user would (host/pane_restart.py):
    Ctrl-C, the shell's prompt back, the edited command typed, Enter. Raises
    RestartFailed."""
    source = server.source
    assert source is not None and source.kind == "tmux"
    body = {
        "socket": source.detail.get("socket") or "",
        "pane": source.detail["pane"],
        "pid": server.pid,
        "start_time": server.start_time,
        "command": new.shell,
        "argv": new.server_argv,
        "grace_s": grace_s,
    }
    return await _in_pane(transport, python, body, f"restart in {source.label}")


async def launch_in_tmux(
    transport: Transport, python: str, session: str, cwd: str | None, new: LaunchCommand
) -> Launched:
    """Start `new` in a new window of the tmux session, typed at its shell's prompt
    (sgwatch launch --in-tmux): it runs as if the user had typed it there."""
    window = ["tmux", "new-window", "-d", "-P", "-F", "#{session_name}:#{window_index}.0"]
    window += ["-t", f"{session}:", *(["-c", cwd] if cwd else [])]
    try:
        r = await transport.run(shlex.join(window), timeout=20)
    except (TransportError, TimeoutError) as e:
        raise RestartFailed("launch", f"tmux new-window failed: {e}") from None
    if r.exit_status != 0:
        why = r.stderr.decode("utf-8", "replace").strip().splitlines() or ["tmux failed"]
        raise RestartFailed("identify", f"no window in tmux session {session!r}: {why[-1]}")
    pane = r.stdout.decode().strip()
    body = {"socket": "", "pane": pane, "pid": None, "start_time": None}
    body |= {"command": new.shell, "argv": new.server_argv, "grace_s": 0}
    return await _in_pane(transport, python, body, f"launch in tmux {pane}")


async def _in_pane(transport: Transport, python: str, body: dict, what: str) -> Launched:
    stopped = [body["pid"]] if body["pid"] else []
    return await _relaunched(
        transport, python, PANE, body, body["grace_s"] + 60, "pane", what, stopped
    )


def service_restart(source: LogSource | None) -> tuple[list[str], str] | None:
    """The owner's own restart of the server's container or unit, and the part of the
    cgroup path its new process is in (None: not a container or a unit)."""
    if source is None or source.problem:
        return None
    if source.kind == "docker":
        container = source.detail["container"]
        return ["docker", "restart", container], f"docker-{container}"
    if source.kind == "journald":
        unit = source.detail["unit"]
        return ["systemctl", "--no-ask-password", "restart", unit], f"/{unit}"
    return None


async def restart_service(transport: Transport, python: str, server: ServerProcess) -> Launched:
    """Restart the server's container or unit with the same flags, as its owner would
    (host/service_restart.py); the container or unit is not changed. Raises RestartFailed."""
    how = service_restart(server.source)
    assert how is not None and server.source is not None
    tool, cgroup = how
    body = {
        "tool": tool,
        "cgroup": cgroup,
        "argv": server.argv,
        "pid": server.pid,
        "start_time": server.start_time,
    }
    what = shlex.join(tool)
    return await _relaunched(transport, python, SERVICE, body, 240, "service", what, [server.pid])


async def _relaunched(
    transport: Transport,
    python: str,
    module: str,
    body: dict,
    timeout: float,
    stage: str,
    what: str,
    stopped: list[int],
) -> Launched:
    """Run a program that puts the server back the user's way (in its pane, by its
    container's or unit's owner) and read the new server from its answer."""
    try:
        answer = await _ask(transport, python, module, body, timeout)
    except (TransportError, TimeoutError, ValueError, IndexError) as e:
        raise RestartFailed(stage, f"{what} failed: {e}") from None
    if "error" in answer:
        raise RestartFailed(stage, f"{what}: {answer['error']}")
    return Launched(
        pid=answer["pid"],
        start_time=answer["start_time"],
        cwd=answer["cwd"],
        kept=None,
        stopped=stopped,
        forced=False,
        env=None,
    )


async def _ask(
    transport: Transport, python: str, module: str, body: object, timeout: float
) -> dict:
    """The JSON answer on the last line a program sent to the host prints."""
    sent = program(module, body).encode()
    r = await transport.run(f"exec {shlex.quote(python)} -", input=sent, timeout=timeout)
    return json.loads(r.stdout.decode("utf-8", "replace").strip().splitlines()[-1])


async def preflight(
    transport: Transport,
    engine: Engine,
    interpreter: str | None,
    cmd: LaunchCommand,
    catalog: Catalog,
) -> Preflight:
    """What would refuse `cmd`: the flag catalog first, then the host's own parser."""
    problems = engine.check(catalog, cmd)
    if any(p.level == "error" for p in problems):
        return Preflight(problems, f"the flag catalog ({catalog.engine} {catalog.version or '?'})")
    if not interpreter:
        return Preflight(problems, "the flag catalog only: the server's interpreter is unknown")
    req = engine.preflight_request(cmd)
    try:
        answer = await _ask(transport, interpreter, PREFLIGHT, req, 120)
    except (TransportError, TimeoutError, ValueError, IndexError) as e:
        return Preflight(problems, f"the flag catalog only: the host's parser did not answer ({e})")
    if answer.get("ok") is None:
        return Preflight(problems, f"the flag catalog only: {answer.get('error')}")
    if not answer["ok"]:
        problems = [*problems, Problem("", "error", answer["error"])]
    return Preflight(problems, answer["checked_by"])


async def restart(transport: Transport, python: str, req: RestartRequest) -> Launched:
    """Stop the server, keep its log, launch `req.argv`. Raises RestartFailed.
    `req.mode` "launch" only keeps and launches (the stop was done before)."""
    answer = await _call(transport, python, req)
    return Launched(
        pid=answer["pid"],
        start_time=answer["start_time"],
        cwd=answer["cwd"],
        kept=answer["kept"],
        stopped=answer["stopped"],
        forced=answer["forced"],
        env=answer["env"],
        log=answer["log"],
    )


async def stop(transport: Transport, python: str, req: RestartRequest) -> Stopped:
    """Only stop the server (and wait for its GPU memory): the first half of a restart."""
    answer = await _call(transport, python, dataclasses.replace(req, mode="stop"))
    return Stopped(answer["stopped"], answer["forced"], answer["cwd"], answer["env"])


async def _call(transport: Transport, python: str, req: RestartRequest) -> dict:
    body = dataclasses.asdict(req) | {"return_env": True}
    timeout = req.grace_s + req.gpu_wait_s + 60
    try:
        r = await transport.run(
            f"exec {shlex.quote(python)} -", input=program(RESTART, body).encode(), timeout=timeout
        )
    except TransportError as e:
        # Cut off before the program arrived, it did nothing; once it runs, it finishes.
        raise RestartFailed(
            "link",
            f"lost the host during the restart ({e}): it may have completed there; "
            f"`sgwatch wait {transport.label}` follows whichever server runs now",
        ) from None
    except TimeoutError:
        raise RestartFailed("timeout", f"no answer from the host after {timeout:.0f} s") from None
    lines = r.stdout.decode("utf-8", "replace").strip().splitlines()
    try:
        answer = json.loads(lines[-1])
    except (ValueError, IndexError):
        why = r.stderr.decode("utf-8", "replace").strip().splitlines()
        last = (why or ["no output"])[-1]
        raise RestartFailed("host", f"the restart program failed: {last}") from None
    if "error" in answer:
        raise RestartFailed(answer["stage"], answer["error"])
    return answer
