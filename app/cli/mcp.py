"""`sgwatch mcp [--allow-actions] [--config FILE]`: the MCP server over stdio (agent/).

Its `wait` tool answers what `sgwatch wait`'s exit status would mean, from the one
table (exitcodes.py): the agent package sits below the command line and is handed it.
"""

from __future__ import annotations

import argparse
import sys

from sgwatch.cli import exitcodes
from sgwatch.config import ConfigError, load_config_arg
from sgwatch.live.session import Session


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = exitcodes.add_command(
        sub,
        "mcp",
        help="an MCP server over stdio: status, wait, restart, bench ... as tools for agents",
        description="Serve sgwatch's tools to an MCP client (a coding agent) over stdin and "
        "stdout: servers, status, wait (with progress notifications), events, log, flags, "
        "restart, launch, bench, experiments. Read-only unless --allow-actions; even then "
        "restart and launch act only when called with confirm: true.",
    )
    p.add_argument(
        "--allow-actions",
        action="store_true",
        help="let restart and launch act (with confirm: true); otherwise they only preview",
    )
    p.add_argument("--config", metavar="FILE", help="configuration file (default: XDG location)")


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config_arg(args.config)
    except ConfigError as e:
        print(e, file=sys.stderr)
        return exitcodes.USAGE
    from sgwatch.agent.server import serve  # the MCP SDK loads only for this command

    serve(config, args.allow_actions, _judge)
    return exitcodes.OK


def _judge(outcome: str, session: Session) -> tuple[int, str]:
    from sgwatch.cli.wait_events import exit_status

    code = exit_status(outcome, session)
    return code, dict(exitcodes.TABLE)[code]
