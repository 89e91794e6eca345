"""Follow a log that a host command prints from its start: a Docker container's
(`docker logs --follow`), a systemd unit's journal (`journalctl -u UNIT -f -o cat`),
from the server's start, or a tmux pane's lines (host_tmux.py), with a file's
guarantees (host_stream.py: every byte once, in order, across reconnects).

    follower = StreamFollower(link, server.source, python)   # the LogFollower events
"""

from __future__ import annotations

import hashlib
import shlex
from importlib.resources import files

from sgwatch.remote.discover import LogSource
from sgwatch.remote.logfollow import LogFollower
from sgwatch.transport.link import Link

_SOURCE = files("sgwatch.remote").joinpath("host_stream.py").read_text()
_TMUX = files("sgwatch.remote").joinpath("host_tmux.py").read_text()
PYTHON = "@PYTHON@"  # host_stream.py runs the command with its own Python there


def stream_command(source: LogSource) -> list[str] | None:
    """The host command that prints the source's log from the server's start; None: the
    source is not one (a file, or nothing to read)."""
    if source.problem:
        return None
    if source.kind == "tmux":
        return [PYTHON, "-c", _TMUX, source.detail["socket"] or "-", source.detail["pane"]]
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
        sha = hashlib.sha256(head).hexdigest() if head else "-"
        args = shlex.join([str(self.offset), self.ident or "-", str(len(head)), sha, *self.command])
        pythons = " ".join(shlex.quote(p) for p in (self.python, "python3") if p)
        return (
            f"for py in {pythons}; do\n"
            f'  command -v "$py" >/dev/null 2>&1 && exec "$py" -c {shlex.quote(_SOURCE)} {args}\n'
            "done\n"
            "echo 'no python3 on this host (needed to follow the log)' >&2; exit 127"
        )
