"""Follow a tmux pane's output (host/tmux.py: its history, then its pipe-pane, or polled
when the user pipes it) with a file's guarantees: every line once, in order, across
reconnects. A pane's past is sent again by a new capture after a drop, as text rather
than the bytes piped, so resuming counts lines, not bytes: the follower keeps what
host/tmux.py's Sent says was sent, and the host program goes on after it.

    follower = PaneFollower(link, server.source, python)   # the LogFollower events
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from sgwatch.remote.discover import LogSource
from sgwatch.remote.host.tmux import TRIM, Sent
from sgwatch.remote.hostprogram import program
from sgwatch.remote.logfollow import LogData, LogEvent, LogFollower, LogOpened, python_command
from sgwatch.transport.base import Stream
from sgwatch.transport.link import Link


class PaneFollower(LogFollower):
    def __init__(self, link: Link, source: LogSource, python: str = "") -> None:
        super().__init__(link, source.label, python)
        self.socket = source.detail["socket"]
        self.pane = source.detail["pane"]
        self.sent = Sent()
        self.trim = TRIM  # bytes of the host's piped file kept once read

    def _command(self) -> str:
        request = {
            "socket": self.socket,
            "pane": self.pane,
            "offset": self.offset,
            "sent": self.sent.request(),
            "trim": self.trim,
        }
        return python_command(self.python, program("sgwatch.remote.host.tmux", request))

    async def _decode(self, stream: Stream) -> AsyncIterator[LogEvent]:
        async for ev in super()._decode(stream):
            if isinstance(ev, LogData):
                self.sent.add(ev.data)
            elif isinstance(ev, LogOpened) and ev.offset == 0:
                self.sent = Sent()
            yield ev
