"""One host's dashboard: header, crash banner, warmup and throughput beside the log."""

from __future__ import annotations

import time

from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.css.query import NoMatches
from textual.widgets import Static

from sgwatch.control.controller import Controller
from sgwatch.control.metrics_poll import poll_metrics
from sgwatch.ui.quiet import show
from sgwatch.ui.widgets.crash import CrashBanner
from sgwatch.ui.widgets.gpus import GpuPanel
from sgwatch.ui.widgets.header import HostHeader
from sgwatch.ui.widgets.logpane import LogPane
from sgwatch.ui.widgets.throughput import ThroughputPanel
from sgwatch.ui.widgets.warmup import WarmupPanel
from sgwatch.watch import Watch

# Some parts finish drawing a frame later (GPU rows mount first; charts redraw
# at most once a second), so a quiet screen still redraws this often.
REDRAW_ANYWAY_S = 1.0


class HostPane(Vertical):
    """Renders one Watch; `refresh_from_watch` runs on the app's frame timer."""

    def __init__(self, watch: Watch, ctl: Controller | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.watch = watch
        self.ctl = ctl  # restarts and the flag panel; None for a replayed file
        self._ready, self._crashed = watch.state.ready, watch.state.crash is not None
        self._drawn: tuple | None = None  # the Watch fingerprint last drawn
        self._drawn_at = 0.0
        self._log_pane = LogPane()  # read on every frame: no query (it fails at teardown)

    def compose(self) -> ComposeResult:
        yield HostHeader()
        yield Static(id="note")
        yield CrashBanner()
        with Container(classes="body"):
            with Vertical(classes="panels"):
                yield WarmupPanel()
                yield ThroughputPanel()
                yield GpuPanel()
            yield self._log_pane

    def on_mount(self) -> None:
        if self.ctl is not None:  # /metrics, when the server exports it
            self.run_worker(
                poll_metrics(self.ctl, self.watch), group="metrics", exit_on_error=False
            )

    @property
    def log_pane(self) -> LogPane:
        return self._log_pane

    def refresh_from_watch(self) -> str | None:
        """Draw the latest state; returns "ready" or "crashed" when that just happened."""
        w = self.watch
        now = time.monotonic()
        if (  # first, as it is most frames: the queries below walk the widget tree
            w.fingerprint == self._drawn
            and not self.log_pane.needs_status
            and now - self._drawn_at < REDRAW_ANYWAY_S
        ):
            return None  # nothing new since the last frame
        try:  # the frame timer can tick before every widget is mounted: skip that frame
            self.query_one("#live")
            header, banner = self.query_one(HostHeader), self.query_one(CrashBanner)
            warmup, tput = self.query_one(WarmupPanel), self.query_one(ThroughputPanel)
            warmup.query_one("#capture-line")
            tput.query_one("#tput-load")
        except NoMatches:
            return None
        self._drawn, self._drawn_at = w.fingerprint, now
        lines, dropped = w.take_lines()
        self.log_pane.add(lines, dropped)
        s = w.state
        header.show(w)
        note = self.query_one("#note", Static)
        note.display = bool(w.note)
        show(note, w.note)
        if self.log_pane.border_subtitle != w.source:
            self.log_pane.border_subtitle = w.source
        banner.show(s)
        warmup.show(s, self.ctl.reference_warmup_s if self.ctl is not None else None)
        tput.show(w, self.ctl)
        self.query_one(GpuPanel).show(w)
        news = None
        if s.ready and not self._ready:
            news = "ready"
        if s.crash is not None and not self._crashed:
            news = "crashed"
        self._ready, self._crashed = s.ready, s.crash is not None
        return news

    def toggle_layout(self) -> None:
        self.query_one(".body").toggle_class("stacked")
