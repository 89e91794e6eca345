"""No terminal, no dashboard: `sgwatch HOST` from an agent's shell tool, cron or a pipe.

The dashboard reads keys from stdin and Textual draws it on stderr; with those (or stdout,
which a script capturing our output holds) not a terminal it would draw escape codes into
a file and never end. The commands made for that case are named instead.
"""

from __future__ import annotations

import sys
from typing import TextIO


def terminal(streams: tuple[TextIO | None, ...] | None = None) -> bool:
    """Whether stdin, stdout and stderr are all a terminal (a closed one is not)."""
    given = (sys.stdin, sys.stdout, sys.stderr) if streams is None else streams
    return all(s is not None and s.isatty() for s in given)


def refusal(hosts: list[str]) -> str:
    """The one line said instead of the dashboard, naming the first host if any."""
    host = hosts[0] if hosts else "HOST"
    return (
        "sgwatch: the dashboard needs a terminal (stdin, stdout and stderr); without one use "
        f"`sgwatch wait {host}` (until ready), `sgwatch events {host} --json` (a line per "
        "event) or `sgwatch mcp` (an MCP server for agents)"
    )
