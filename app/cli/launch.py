"""`sgwatch launch HOST [--wait] -- CMD...`: start a server on the host with a log,
then watch it.

The command is judged first by its own interpreter's parser on the host (as the
dashboard's `L` does for hosts.NAME.launch): refused, nothing starts. Then it is
started through the restart program's first-launch mode (control/controller.py
`launch`): detached in its own session, PYTHONUNBUFFERED=1, stdout and stderr to
--log or a new log under the host's sgwatch state directory, in --cwd or the home
directory, and recorded in the host's history. Then the dashboard opens on it, or
with --wait its log is followed as `sgwatch wait` follows one, from the launch: a
crash at once is reported even when the process is already gone.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from functools import partial

from sgwatch.cli import exitcodes, notty
from sgwatch.cli.args import host_args
from sgwatch.cli.restart import failed_status
from sgwatch.cli.wait_events import exit_status, progress_lines, until_args
from sgwatch.config import ConfigError, load_config_arg
from sgwatch.control.controller import Controller
from sgwatch.control.headless import first_connection
from sgwatch.control.restart import RestartFailed, launch_in_tmux
from sgwatch.core.cmdline import LaunchCommand, LaunchError, masked, parse
from sgwatch.engines import process_patterns
from sgwatch.live.follow import follow
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.remote.discover import DiscoveryFailed, host_python
from sgwatch.transport.base import Transport
from sgwatch.transport.errors import TransportError
from sgwatch.transport.factory import transport_for


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = exitcodes.add_command(
        sub,
        "launch",
        help="start a server on the host with a log, then watch it",
        description="Check CMD with the host's own parser (refused: nothing starts), start it "
        "detached with PYTHONUNBUFFERED=1 and its output to a log, record it in the host's "
        "history, then open the dashboard on it; with --wait, follow it as `sgwatch wait` "
        "does instead. Put the server's command after `--`.",
        usage="sgwatch launch HOST [--log PATH | --in-tmux SESSION] [--cwd DIR] [--wait [--until "
        "ready|serving] [--timeout S]] -- CMD...",
    )
    host_args(p)
    p.add_argument(
        "--log",
        metavar="PATH",
        help="the log on the host (default: a new one under "
        "~/.local/state/sgwatch/logs/ there, or hosts.NAME.log)",
    )
    p.add_argument("--cwd", metavar="DIR", help="working directory on the host (default: home)")
    p.add_argument(
        "--in-tmux",
        metavar="SESSION",
        help="type it at the shell prompt of a new window in this tmux session instead "
        "(its output in the pane; no log file)",
    )
    p.add_argument("--wait", action="store_true", help="follow it without a screen, as wait")
    until_args(p, "with --wait: ")


def run(args: argparse.Namespace, argv: list[str]) -> int:
    """`argv`: the server's command, what followed `--`."""
    if not argv:
        print("sgwatch launch: no command (put it after `--`)", file=sys.stderr)
        return exitcodes.USAGE
    if not args.wait and not notty.terminal():  # the dashboard it would open needs one
        print(
            "sgwatch launch: without a terminal there is no dashboard to open on the server: "
            "add --wait to follow it to ready as `sgwatch wait` does; nothing was started",
            file=sys.stderr,
        )
        return exitcodes.USAGE
    try:
        config = load_config_arg(args.config)
        cmd = parse(argv)
    except (ConfigError, LaunchError) as e:
        print(f"sgwatch launch: {e}", file=sys.stderr)
        return exitcodes.USAGE
    profile = config.host(args.host)
    if args.log:
        profile = profile.model_copy(update={"log": args.log})
    make = partial(transport_for, args.host, accept_new_host_key=args.accept_new_host_key)
    session = Session(Watch(args.host), make, profile=profile)
    try:
        status, pid = asyncio.run(_launch(session, make, cmd, args))
    except KeyboardInterrupt:
        return exitcodes.INTERRUPTED
    if pid is None or args.wait:
        return status
    from sgwatch.cli.dashboard import run_dashboard
    from sgwatch.cli.dashboard_args import dashboard_parser

    flags = [args.host, *(["--config", args.config] if args.config else [])]
    dashboard = dashboard_parser().parse_args(
        flags + (["--accept-new-host-key"] if args.accept_new_host_key else [])
    )
    dashboard.pid = pid  # the server just launched, whatever else runs there
    return run_dashboard(dashboard)


async def _launch(
    session: Session, make: Callable[[], Transport], cmd: LaunchCommand, args: argparse.Namespace
) -> tuple[int, int | None]:
    """The exit status and the launched pid (None: not launched)."""
    try:
        transport = await first_connection(session)
        session.found(await host_python(transport, process_patterns()))
    except (TransportError, DiscoveryFailed) as e:
        print(e, file=sys.stderr)
        await session.link.close()
        return exitcodes.UNREACHABLE, None
    ctl = Controller(session)
    print(f"command: {masked(cmd).shell}", flush=True)
    check = await ctl.launch_check(cmd)
    for p in check.problems:
        print(f"{p.level}: {p.flag + ': ' if p.flag else ''}{p.message}", file=sys.stderr)
    if not check.ok:
        print(f"refused by {check.checked_by}; nothing was started", file=sys.stderr)
        await session.link.close()
        return exitcodes.REFUSED, None
    try:
        if args.in_tmux:
            python = session.python or "python3"
            launched = await launch_in_tmux(transport, python, args.in_tmux, args.cwd, cmd)
            ctl.history.launched(cmd, launched.cwd, launched.pid)
        else:
            launched = await ctl.launch(cmd, cwd=args.cwd)
    except RestartFailed as e:
        print(f"launch failed ({e.stage}): {e.message}", file=sys.stderr)
        await session.link.close()
        return failed_status(e), None
    where = f"log {launched.log}" if launched.log else f"in tmux session {args.in_tmux}"
    print(f"launched on {args.host}: pid {launched.pid}, {where}", flush=True)
    await session.link.close()
    if not args.wait:
        return exitcodes.OK, launched.pid
    # Its log, not discovery: a server that fails at once is gone before it could be found
    # (in a tmux pane it was found running: its pane, by discovery).
    log, pid = (launched.log, None) if launched.log else (None, launched.pid)
    run = Session(Watch(args.host), make, log=log, profile=session.profile, pid=pid)
    ctl.attach(run.watch)  # records ready or the crash in the history
    outcome = await follow(run, args.until, args.timeout, progress_lines(args.every))
    return exit_status(outcome, run), launched.pid
