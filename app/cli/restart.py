"""`sgwatch restart HOST [--enable NAME] [--disable NAME] [--set NAME=VALUE] [--unset NAME]`.

The flag panel's loop without a screen: find the server, edit its command
(NAME is the flag without its dashes), preflight it with the host's parser,
print the diff and the exact command, ask (unless --yes), restart, then
follow the new run as `sgwatch wait` does. Refused (by the preflight or by the
user) is REFUSED: the server was not touched.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from functools import partial

from sgwatch.cli import exitcodes
from sgwatch.cli.args import host_args
from sgwatch.cli.pick import NotPicked, pick
from sgwatch.cli.pods import Shared, pod_address, run_pod_restart
from sgwatch.cli.wait_events import every_arg, exit_status, progress_lines, session_for
from sgwatch.config import ConfigError, load_config_arg
from sgwatch.control import flagedit
from sgwatch.control.controller import Controller
from sgwatch.control.edits import apply_edits
from sgwatch.control.headless import first_connection
from sgwatch.control.restart import RestartFailed
from sgwatch.core.cmdline import LaunchCommand, LaunchError, masked
from sgwatch.engines import Catalog, process_patterns
from sgwatch.live.follow import follow
from sgwatch.live.session import Session
from sgwatch.remote.discover import DiscoveryFailed, discover
from sgwatch.transport.errors import TransportError

# Stages at which a restart stops before touching the server (control/restart.py).
_UNTOUCHED = ("busy", "lock", "identify", "room")


def failed_status(e: RestartFailed) -> int:
    """The exit status of a restart or launch that stopped at `e.stage`."""
    if e.stage == "link":
        return exitcodes.UNREACHABLE
    return exitcodes.REFUSED if e.stage in _UNTOUCHED else exitcodes.FAILED


def add_parser(sub: argparse._SubParsersAction) -> None:
    r = exitcodes.add_command(
        sub,
        "restart",
        help="edit the server's flags and restart it safely, then wait until it is ready",
        description="Restart the SGLang or vLLM server on HOST with edited flags: the new command "
        "is checked by the host's own parser first, the old server is stopped (SIGTERM, then "
        "SIGKILL after --grace), its log kept under a timestamped name, and the new one "
        "launched in the same directory and environment. NAME is a flag without its dashes. "
        "Once launched, the new run is followed as `sgwatch wait` follows one.",
    )
    host_args(r)
    r.add_argument("--enable", action="append", default=[], metavar="NAME", help="add a switch")
    r.add_argument("--disable", action="append", default=[], metavar="NAME", help="switch it off")
    r.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="set a value")
    r.add_argument("--unset", action="append", default=[], metavar="NAME", help="remove a flag")
    r.add_argument("--yes", action="store_true", help="do not ask before restarting")
    r.add_argument("--pid", type=int, help="the server to restart when several run")
    r.add_argument("--grace", type=float, default=30.0, metavar="S", help="SIGTERM to SIGKILL")
    r.add_argument("--timeout", type=float, metavar="S", help="wait at most S s for ready")
    every_arg(r)


def run(args: argparse.Namespace) -> int:
    try:
        address = pod_address(args.host, load_config_arg(args.config))
    except (ConfigError, ValueError) as e:
        print(e, file=sys.stderr)
        return exitcodes.USAGE
    if address is not None:  # the owner of pods, through kubectl
        return run_pod_restart(args, address, _ask, Shared(progress_lines, exit_status))
    session = session_for(args)
    if session is None:
        return exitcodes.USAGE
    try:
        return asyncio.run(_restart(session, args, _ask))
    except KeyboardInterrupt:
        return exitcodes.INTERRUPTED


async def _restart(session: Session, args: argparse.Namespace, ask: Callable[[str], bool]) -> int:
    say = partial(print, flush=True)
    try:
        transport = await first_connection(session)
        found = await discover(transport, process_patterns())
    except (TransportError, DiscoveryFailed) as e:
        print(e, file=sys.stderr)
        await session.link.close()
        return exitcodes.UNREACHABLE
    try:
        session.found(found.python, pick(found.servers, args.pid, args.host))
    except NotPicked as e:
        print(e, file=sys.stderr)
        await session.link.close()
        return e.status
    ctl = Controller(session)
    catalog = (await ctl.catalog()).catalog
    try:
        new = edited(ctl.current, args, catalog)
    except LaunchError as e:
        print(f"sgwatch restart: {e}", file=sys.stderr)
        await session.link.close()
        return exitcodes.REFUSED
    for line in flagedit.describe_changes(ctl.current, new, catalog) or ["(no flag changes)"]:
        say(line)
    say(f"command: {masked(new).shell}")
    check = await ctl.preflight(new)
    for p in check.problems:
        print(f"{p.level}: {p.flag + ': ' if p.flag else ''}{p.message}", file=sys.stderr)
    if not check.ok:
        print(f"refused by {check.checked_by}; the server was not touched", file=sys.stderr)
        await session.link.close()
        return exitcodes.REFUSED
    if not args.yes and not ask(f"restart pid {session.server.pid} on {args.host}? [y/N] "):
        say("not restarted")
        await session.link.close()
        return exitcodes.REFUSED
    try:
        launched = await ctl.restart(new, grace_s=args.grace)
    except RestartFailed as e:
        print(f"restart failed ({e.stage}): {e.message}", file=sys.stderr)
        await session.link.close()
        return failed_status(e)
    kept = f"; old log kept as {launched.kept}" if launched.kept else ""
    say(f"restarted: pid {launched.pid}{kept}")
    await session.link.close()
    # a session of its own for the new run, on the new server (not another on the host)
    run = session.again(pid=launched.pid)
    ctl.attach(run.watch)  # records ready or the crash in the history
    outcome = await follow(run, "ready", args.timeout, progress_lines(args.every))
    return exit_status(outcome, run)


def edited(cmd: LaunchCommand, args: argparse.Namespace, catalog: Catalog) -> LaunchCommand:
    """The command with the edits asked for, each checked against the catalog."""
    return apply_edits(
        cmd,
        catalog,
        enable=args.enable,
        disable=args.disable,
        set_values=args.set,
        unset=args.unset,
    )


def _ask(question: str) -> bool:
    if not sys.stdin.isatty():
        print("not a terminal to ask on: pass --yes to restart", file=sys.stderr)
        return False
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False
