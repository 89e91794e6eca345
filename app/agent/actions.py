"""`restart` and `launch`: the actions, each judged first by the engine's own parser on
the host. Without `confirm` they answer the exact command and what would happen, and
change nothing; with it, only a server started with --allow-actions acts. A refusal is
a ToolError of one line, and the server is not touched."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from sgwatch.agent.budget import clean
from sgwatch.control import flagedit
from sgwatch.control.controller import Controller
from sgwatch.control.edits import apply_edits
from sgwatch.control.headless import first_connection
from sgwatch.control.restart import Preflight, RestartFailed, launch_in_tmux
from sgwatch.core.cmdline import LaunchCommand, LaunchError, masked, parse_shell
from sgwatch.engines import for_command, process_patterns
from sgwatch.live.choice import described
from sgwatch.live.follow import follow
from sgwatch.live.session import Session
from sgwatch.remote.discover import DiscoveryFailed, ServerProcess, discover, host_python
from sgwatch.transport.errors import TransportError

READ_ONLY = "sgwatch mcp runs read-only: start it with --allow-actions to {what}"
FOLLOW_S = 3600.0  # a restarted run is followed this long to record its outcome
Doc = dict[str, Any]


class Edits(BaseModel):
    """Flag edits by name, with or without the dashes."""

    enable: list[str] = Field(default_factory=list, description="switches to turn on")
    disable: list[str] = Field(default_factory=list, description="switches to turn off")
    set: dict[str, str] = Field(default_factory=dict, description="NAME: VALUE to set")
    unset: list[str] = Field(default_factory=list, description="flags to remove")


def pick(servers: list[ServerProcess], pid: int | None, host: str) -> ServerProcess:
    """The server to act on: `pid`, or the only one running."""
    if pid is not None:
        found = next((s for s in servers if s.pid == pid), None)
        if found is None:
            raise ToolError(f"{host}: no server with pid {pid}")
        return found
    if not servers:
        raise ToolError(f"{host}: no server running")
    if len(servers) > 1:
        listed = "; ".join(described(servers).splitlines())
        raise ToolError(clean(f"{len(servers)} servers on {host}, pass pid: {listed}", 300))
    return servers[0]


async def restart(
    session: Session,
    background: set[asyncio.Task],
    edits: Edits,
    pid: int | None,
    confirm: bool,
    allowed: bool,
    grace_s: float,
) -> Doc:
    host = session.watch.label
    if confirm and not allowed:
        raise ToolError(READ_ONLY.format(what="restart servers") + "; nothing was touched")
    try:
        try:
            transport = await first_connection(session)
            found = await discover(transport, process_patterns())
        except (TransportError, DiscoveryFailed) as e:
            raise ToolError(clean(str(e), 300)) from None
        session.found(found.python, pick(found.servers, pid, host))
        ctl = Controller(session)
        catalog = (await ctl.catalog()).catalog
        old = ctl.current
        assert old is not None and session.server is not None
        try:
            new = apply_edits(
                old,
                catalog,
                enable=[_bare(n) for n in edits.enable],
                disable=[_bare(n) for n in edits.disable],
                set_values=[f"{_bare(k)}={v}" for k, v in edits.set.items()],
                unset=[_bare(n) for n in edits.unset],
            )
        except LaunchError as e:
            raise ToolError(f"refused: {e}; nothing was touched") from None
        changes = flagedit.describe_changes(old, new, catalog)
        check = await ctl.preflight(new)
        _judged(check, "nothing was touched")
        doc: Doc = {"pid": session.server.pid, "changes": changes, "command": _shell(new)}
        if not confirm:
            ctl.close()
            return doc | {
                "would": f"stop pid {session.server.pid} (TERM, KILL after {grace_s:g} s), keep "
                "its log aside, launch the command in its directory and environment",
                "checked_by": check.checked_by,
                "confirm": "call again with confirm: true"
                + ("" if allowed else " on a server started with --allow-actions"),
            }
        try:
            launched = await ctl.restart(new, grace_s=grace_s)
        except RestartFailed as e:
            ctl.close()
            raise ToolError(clean(f"restart failed ({e.stage}): {e.message}", 300)) from None
    finally:
        await session.link.close()
    assert launched is not None
    # The new run followed in the background, so its outcome reaches the history.
    run = session.again(pid=launched.pid)
    ctl.attach(run.watch)
    task = asyncio.create_task(follow(run, "ready", FOLLOW_S, lambda _: None))
    background.add(task)
    task.add_done_callback(lambda t: (background.discard(t), ctl.close()))
    return doc | {
        "restarted": launched.pid,
        "old_log_kept": launched.kept,
        "next": f"wait(host={host!r}, pid={launched.pid})",
    }


async def launch(
    session: Session,
    command: str,
    tmux: str | None,
    cwd: str | None,
    confirm: bool,
    allowed: bool,
) -> Doc:
    host = session.watch.label
    if confirm and not allowed:
        raise ToolError(READ_ONLY.format(what="launch servers") + "; nothing was started")
    try:
        cmd = parse_shell(command)
    except LaunchError as e:
        raise ToolError(clean(f"refused: {e}", 300)) from None
    if for_command(cmd) is None:
        raise ToolError("refused: not the command of a server sgwatch knows (SGLang, vLLM)")
    try:
        try:
            transport = await first_connection(session)
            session.found(await host_python(transport, process_patterns()))
        except (TransportError, DiscoveryFailed) as e:
            raise ToolError(clean(str(e), 300)) from None
        ctl = Controller(session)
        ctl.close()  # launched below, recorded by launch(); no run to follow here
        check = await ctl.launch_check(cmd)
        _judged(check, "nothing was started")
        where = f"a new window of tmux session {tmux}" if tmux else "a log"
        doc: Doc = {"command": _shell(cmd)}
        if not confirm:
            log = session.profile.log or "a new log under ~/.local/state/sgwatch/logs/"
            return doc | {
                "would": f"start it detached with its output to {where}"
                + ("" if tmux else f" ({log})")
                + f", in {cwd or 'the home directory'}",
                "checked_by": check.checked_by,
                "confirm": "call again with confirm: true"
                + ("" if allowed else " on a server started with --allow-actions"),
            }
        try:
            if tmux:
                python = session.python or "python3"
                launched = await launch_in_tmux(transport, python, tmux, cwd, cmd)
                ctl.history.launched(cmd, launched.cwd, launched.pid)
            else:
                launched = await ctl.launch(cmd, cwd=cwd)
        except RestartFailed as e:
            raise ToolError(clean(f"launch failed ({e.stage}): {e.message}", 300)) from None
    finally:
        await session.link.close()
    return doc | {
        "launched": launched.pid,
        "log": launched.log or None,
        "next": f"wait(host={host!r}, pid={launched.pid})",
    }


def _judged(check: Preflight, untouched: str) -> None:
    """Raise the preflight's refusal, its first error in one line."""
    if not check.ok:
        p = check.errors[0]
        flag = f"{p.flag}: " if p.flag else ""
        why = f"refused by {check.checked_by}: {flag}{p.message}; {untouched}"
        raise ToolError(clean(why, 300))


def _bare(name: str) -> str:
    return name.strip().lstrip("-")


def _shell(cmd: LaunchCommand) -> str:
    return clean(masked(cmd).shell, 400)
