"""How a watched host's link stands (Watch.link): a kind, and for a drop its cause.

Code tests the kind; users read the text (`str`): "live", "stale: connection
lost", ... in the header, the `events` records and `wait`'s lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Link(StrEnum):
    CONNECTING = "connecting"  # no answer from the host yet
    LIVE = "live"  # the log is followed as it is written
    STALE = "stale"  # the link dropped; it is being made again (the cause says why)
    WAITING = "waiting"  # connected, the named log does not exist yet (the note says so)
    NO_SERVER = "no server"  # connected, nothing to follow yet; looked at again
    ENDED = "ended"  # the log stream ended
    FAILED = "failed"  # given up: the note says why


@dataclass(frozen=True, slots=True)
class LinkState:
    kind: Link
    cause: str = ""  # a drop's reason (STALE only)

    def __str__(self) -> str:
        return f"{self.kind}: {self.cause}" if self.kind is Link.STALE else str(self.kind)


CONNECTING = LinkState(Link.CONNECTING)
LIVE = LinkState(Link.LIVE)
WAITING = LinkState(Link.WAITING)
NO_SERVER = LinkState(Link.NO_SERVER)
ENDED = LinkState(Link.ENDED)
FAILED = LinkState(Link.FAILED)


def stale(cause: object) -> LinkState:
    """The link dropped for `cause` (an exception or a reason) and is being made again."""
    return LinkState(Link.STALE, str(cause))
