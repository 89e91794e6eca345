"""One line: host, engine, model, parallelism, the state badge, run time, link."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.content import Content
from textual.widgets import Static

from sgwatch.core import events as ev
from sgwatch.core.display import duration
from sgwatch.core.state import seconds_between
from sgwatch.live.linkstate import LIVE
from sgwatch.live.watch import Watch
from sgwatch.ui.badges import badge
from sgwatch.ui.quiet import show

_KIND_STYLE = {"good": "$success", "bad": "$error", "busy": "$accent", "pending": "$foreground"}


class HostHeader(Static):
    DEFAULT_CSS = "HostHeader { height: 1; padding: 0 1; background: $panel; }"

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._stamp: tuple[str | None, float] = (None, 0.0)  # the log's last time, seen when
        self._ticking_at: int | None = None  # the second the running clock was drawn at

    @property
    def clock_due(self) -> bool:
        """The run clock goes on while the log is quiet (a long compile prints nothing):
        a new second to show."""
        return self._ticking_at is not None and int(self._clock()) != self._ticking_at

    def show(self, watch: Watch) -> None:
        s = watch.state
        parts = [Content.styled(watch.label, "bold")]
        # Until a line names the engine, discovery's release alone says what runs.
        engine = f"{s.engine or ''} {watch.engine_version}".strip()
        parts.append(Content(engine or "engine ?"))
        if s.identity is not None:
            if s.identity.model:
                parts.append(Content(s.identity.model))
            if s.identity.parallel:
                parts.append(Content(s.identity.parallel))
        if watch.node is not None:
            parts.append(Content(str(watch.node)))
        text, kind = badge(s.state, watch.link)
        parts.append(Content.styled(f" {text} ", f"bold reverse {_KIND_STYLE[kind]}"))
        started = s.phases[0].started_at if s.phases else s.run_started_at
        self._ticking_at = None
        if (up := seconds_between(started, s.now_ts)) is not None:
            quiet = self._quiet_s(watch)
            parts.append(Content(f"run {duration(up + (quiet or 0.0))}"))
            if quiet is not None:
                self._ticking_at = int(self._clock())
        link = "● live" if watch.link == LIVE else f"○ {watch.link}"
        parts.append(Content.styled(link, "$text-muted"))
        if watch.history is not None:  # the state so far is the log's tail alone
            read, size = watch.history
            parts.append(Content.styled(f"reading history {read * 100 // size} %", "$warning"))
        show(self, Content("  ").join(parts))

    def _quiet_s(self, watch: Watch) -> float | None:
        """Seconds since the log's last stamp arrived, while it is followed live and the
        run goes on: the run's time is that stamp plus the wall time since. None: the
        clock stands still (not live, or the run ended)."""
        s, now = watch.state, self._clock()
        if self._stamp[0] != s.now_ts:
            self._stamp = (s.now_ts, now)
        if watch.link != LIVE or s.state in (ev.CRASHED, ev.STOPPED):
            return None
        return now - self._stamp[1]
