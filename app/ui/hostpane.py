"""One host's dashboard: header, crash banner, warmup and throughput beside the log."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.css.query import NoMatches
from textual.widgets import Static

from sgwatch.control.controller import Controller
from sgwatch.control.metrics_poll import poll_metrics
from sgwatch.live.watch import Watch
from sgwatch.ui.quiet import show
from sgwatch.ui.widgets.chart import LineChart
from sgwatch.ui.widgets.crash import CrashBanner
from sgwatch.ui.widgets.gpus import GpuPanel
from sgwatch.ui.widgets.header import HostHeader
from sgwatch.ui.widgets.logpane import LogPane
from sgwatch.ui.widgets.throughput import ThroughputPanel
from sgwatch.ui.widgets.warmup import WarmupPanel

# Some parts finish drawing a frame later (GPU rows mount first; charts redraw
# at most every 2 s), so a screen that just went quiet draws once more after
# this long.
REDRAW_ANYWAY_S = 1.0


class HostPane(Vertical):
    """Renders one Watch; `refresh_from_watch` runs on the app's frame timer."""

    def __init__(
        self,
        watch: Watch,
        ctl: Controller | None = None,
        clock: Callable[[], float] = time.monotonic,  # the throttles' clock (tests: their own)
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.watch = watch
        self.clock = clock
        self.ctl = ctl  # restarts and the flag panel; None for a replayed file
        self._drawn: tuple | None = None  # the Watch fingerprint last drawn
        self._drawn_but_gpu: tuple | None = None
        self._drawn_bench: object = None  # the Controller's bench last drawn
        self._drawn_at = 0.0
        self._settling = True  # the last draw followed a change: parts may still be deferred
        self._log_pane = LogPane(clock)  # read on every frame: no query (it fails at teardown)

    def compose(self) -> ComposeResult:
        yield HostHeader(self.clock)
        yield Static(id="note")
        yield CrashBanner()
        with Container(classes="body"):
            with Vertical(classes="panels"):
                yield WarmupPanel()
                yield ThroughputPanel(self.clock)
                yield GpuPanel(self.clock)
            yield self._log_pane

    def on_mount(self) -> None:
        if self.ctl is not None:  # /metrics, when the server exports it
            self.run_worker(
                poll_metrics(self.ctl, self.watch), group="metrics", exit_on_error=False
            )

    @property
    def log_pane(self) -> LogPane:
        return self._log_pane

    @property
    def settled(self) -> bool:
        """The Watch as it is now is drawn, every part of it: no draw is left for later."""
        return self.watch.fingerprint == self._drawn and not self._settling

    def due(self) -> bool:
        """Is there anything to draw? Asked first on every frame, so it touches no
        widget: nothing new since the last draw is most frames."""
        w = self.watch
        if w.fingerprint != self._drawn or self.log_pane.needs_status or self._bench_news():
            return True
        # A draw can leave parts for later (GPU rows redraw once a second, charts
        # every 2 s): draw again a while after, until nothing is left, then rest.
        return self.clock() - self._drawn_at >= REDRAW_ANYWAY_S and self._settling

    def on_line_chart_resized(self, message: LineChart.Resized) -> None:
        message.stop()
        self._drawn = self._drawn_but_gpu = None  # draw all next frame, the chart at its size

    def _bench_news(self) -> bool:
        """A bench finished (the throughput panel shows its batch-1 figure)."""
        return self.ctl is not None and self.ctl.bench is not self._drawn_bench

    def refresh_from_watch(self) -> None:
        """Draw the latest state."""
        w = self.watch
        now = self.clock()
        try:  # the frame timer can tick before every widget is mounted: skip that frame
            self.query_one("#live")
            header, banner = self.query_one(HostHeader), self.query_one(CrashBanner)
            warmup, tput = self.query_one(WarmupPanel), self.query_one(ThroughputPanel)
            warmup.query_one("#capture-line")
            tput.query_one("#tput-load")
        except NoMatches:
            return None
        changed = w.fingerprint != self._drawn
        gpu_only = (
            w.fingerprint_but_gpu == self._drawn_but_gpu
            and not self.log_pane.needs_status
            and not self._bench_news()
        )
        self._drawn, self._drawn_but_gpu, self._drawn_at = w.fingerprint, w.fingerprint_but_gpu, now
        self._drawn_bench = self.ctl.bench if self.ctl is not None else None
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
        if gpu_only:  # the warmup reads the log's state and the history: neither moved
            pass
        elif self.ctl is None:
            warmup.show(s)
        else:
            warmup.show(s, self.ctl.reference_warmup_s, self.ctl.ready_eta())
        tput.show(w, self.ctl, alone=gpu_only)
        gpus = self.query_one(GpuPanel)
        gpus.show(w, alone=gpu_only)
        self._settling = changed or tput.pending or gpus.pending

    def toggle_layout(self) -> None:
        self.query_one(".body").toggle_class("stacked")
