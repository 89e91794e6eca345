"""What a Watch publishes: each change a user or a script acts on, decided once.

The dashboard (badge, bell, toast), the controller (outcomes in the history),
`wait` and `events` subscribe to the same transitions, so there is one place
that decides a server became ready, crashed or began a new run.
"""

from __future__ import annotations

from dataclasses import dataclass

from sgwatch.core.state import ServerState
from sgwatch.live.linkstate import LinkState

LINK = "link"  # the link changed: `link` is Watch.link, the new state
NOTE = "note"  # one line for the user about the source: `value`
NEW_RUN = "new_run"  # a new server run began (a restart, a new log file)
PHASE = "phase"  # the run's state changed: `value` is the state, `previous` the last one
READY = "ready"  # the run printed its ready line
CRASHED = "crashed"  # the run crashed (its CrashInfo may still gain its exception line)


@dataclass(frozen=True, slots=True)
class Transition:
    kind: str
    value: str | None = None
    previous: str | None = None
    run: ServerState | None = None  # the run it is about; read details from it
    # True for the snapshot published when the log's past has been read: it says
    # how things are, not that they just happened (no bell for a server already up).
    past: bool = False
    link: LinkState | None = None  # LINK's: the link's new state
