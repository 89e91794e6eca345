"""Follow a log that a host command prints from its start: a Docker container's
(`docker logs --follow`), a systemd unit's journal (`journalctl -u UNIT -f -o cat`),
from the server's start, with a file's guarantees (host/stream.py: every byte once, in
order, across reconnects); or a tmux pane's output (panefollow.py).

    follower = source_follower(link, server.source, python)   # the LogFollower events
"""

from __future__ import annotations

import hashlib

from sgwatch.remote.discover import LogSource
from sgwatch.remote.hostprogram import program
from sgwatch.remote.logfollow import LogFollower, python_command
from sgwatch.remote.panefollow import PaneFollower
from sgwatch.transport.link import Link


def printed(source: LogSource) -> bool:
    """Whether a host command prints the source's log (not a file; something to read)."""
    return not source.problem and (source.kind == "tmux" or stream_command(source) is not None)


def source_follower(link: Link, source: LogSource, python: str = "") -> LogFollower:
    """The follower of a log a host command prints (`printed`)."""
    if source.kind == "tmux":
        return PaneFollower(link, source, python)
    return StreamFollower(link, source, python)


def stream_command(source: LogSource) -> list[str] | None:
    """The host command that prints the source's log from the server's start; None: the
    source is not one (a file, a tmux pane, or nothing to read)."""
    if source.problem:
        return None
    since = source.detail.get("since")
    if since is None:
        return None
    if source.kind == "docker":
        return ["docker", "logs", "--follow", "--since", f"{since:.2f}", source.detail["container"]]
    if source.kind == "journald":
        unit = source.detail["unit"]
        # --no-tail: with -f, journalctl would start at the last 10 lines
        follow = ["-f", "-o", "cat", "--no-tail", "--no-pager", "--since", f"@{int(since)}"]
        return ["journalctl", "-u", unit, *follow]
    return None


class StreamFollower(LogFollower):
    def __init__(self, link: Link, source: LogSource, python: str = "") -> None:
        super().__init__(link, source.label, python)
        command = stream_command(source)
        if command is None:
            raise ValueError(f"{source.label}: not a log a command prints")
        self.command = command

    def _command(self) -> str:
        head = bytes(self._head)
        request = {
            "offset": self.offset,
            "ident": self.ident,
            "head_len": len(head),
            "head_sha": hashlib.sha256(head).hexdigest() if head else None,
            "command": self.command,
        }
        return python_command(self.python, program("sgwatch.remote.host.stream", request))
