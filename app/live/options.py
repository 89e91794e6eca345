"""A session's options: what the dashboard, `wait` and `events` each ask of it."""

from __future__ import annotations

from dataclasses import dataclass

from sgwatch.live.pastsplit import SPLIT_FROM
from sgwatch.remote.discover import PLACES

SERVER_CHECK_S = 5.0


@dataclass(frozen=True, slots=True)
class Options:
    """How a session behaves where its callers differ (the dashboard, wait, events)."""

    # With nothing to follow, or once the followed run is over, look again every
    # check_every seconds for a server (the dashboard) instead of giving up.
    keep_looking: bool = False
    # Only runs from now on (wait --since): older logs are not followed, and with no
    # server the host is looked at again every check_every seconds.
    since_now: bool = False
    # With no server running, offer to start the profile's launch command (the
    # dashboard; a headless command never waits for a launch).
    offer_launch: bool = False
    past_logs: tuple[str, ...] = ()  # logs of earlier runs here (the history's), newest first
    # With no server running, where the logs of servers that are gone are looked for
    # (besides the shells' working folders and the past logs' folders; live/choice.py).
    log_places: tuple[str, ...] = PLACES
    check_every: float = SERVER_CHECK_S  # seconds between two looks at the server
    split_from: int = SPLIT_FROM  # a past this long is read by two processes at once


DEFAULTS = Options()  # frozen: one shared default is safe
