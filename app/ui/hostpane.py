"""One host's dashboard: header, crash banner, warmup and throughput beside the log."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.widgets import Static

from sgwatch.control.controller import Controller
from sgwatch.control.metrics_poll import poll_metrics
from sgwatch.control.podcontrol import PodController
from sgwatch.live.watch import Watch
from sgwatch.ui.quiet import hidden, show
from sgwatch.ui.widgets.chart import LineChart
from sgwatch.ui.widgets.crash import CrashBanner
from sgwatch.ui.widgets.gpus import GpuPanel
from sgwatch.ui.widgets.header import HostHeader
from sgwatch.ui.widgets.logpane import LogPane
from sgwatch.ui.widgets.throughput import ThroughputPanel
from sgwatch.ui.widgets.warmup import WarmupPanel

# Some parts finish drawing later than their data arrives (charts redraw at most
# every 2 s): while one waits, the pane draws again this long after its last draw.
REDRAW_ANYWAY_S = 1.0


class HostPane(Vertical):
    """Renders one Watch; the app calls `refresh_from_watch` when `due`."""

    def __init__(
        self,
        watch: Watch,
        ctl: Controller | PodController | None = None,
        clock: Callable[[], float] = time.monotonic,  # the throttles' clock (tests: their own)
        wake: Callable[[], None] = lambda: None,  # ask the app for a frame
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.watch = watch
        self.clock = clock
        self.ctl = ctl  # restarts and the flag panel; None for a replayed file
        self._wake = wake
        self._drawn: tuple | None = None  # the Watch fingerprint, GPU samples aside, last drawn
        self._drawn_bench: object = None  # the Controller's bench last drawn
        self._drawn_at = 0.0
        # Kept, not queried: read on every frame with news (a query walks the DOM
        # matching selectors, and fails while the app tears down).
        self._header = HostHeader(clock)
        self._note = Static(id="note")
        self._banner = CrashBanner()
        self._warmup = WarmupPanel()
        self._tput = ThroughputPanel(clock)
        self._gpus = GpuPanel(watch, clock)
        self._log_pane = LogPane(clock)
        self._body = Container(classes="body")
        self._panels = Vertical(classes="panels")
        self._stacked = False

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._note
        yield self._banner
        with self._body:
            with self._panels:
                yield self._warmup
                yield self._tput
                yield self._gpus
            yield self._log_pane

    def on_mount(self) -> None:
        if isinstance(self.ctl, Controller):  # /metrics, when the server exports it (SSH)
            self.run_worker(
                poll_metrics(self.ctl, self.watch), group="metrics", exit_on_error=False
            )
        elif isinstance(self.ctl, PodController):  # the probe's warning, while quiet too
            self.run_worker(self.ctl.keep_probe_fresh(), group="probe", exit_on_error=False)

    @property
    def log_pane(self) -> LogPane:
        return self._log_pane

    @property
    def settled(self) -> bool:
        """The Watch as it is now is drawn, every part of it: no draw is left for later
        (in a hidden tab: its new lines are kept for the log)."""
        if hidden(self):
            return not self.watch.lines_waiting
        return not self._news and not self._tput.pending and not self._gpus.pending

    def due(self) -> bool:
        """Is there anything to draw? Asked at every wake, so it touches no widget.
        GPU samples alone wait for the GPU rows' own pace, and the run clock for its
        next second: the rest of the pane is not drawn for them. In a hidden tab only
        new lines are due: kept for the log, drawn with the rest once it is chosen."""
        if hidden(self):
            return self.watch.lines_waiting
        if self._news or self._header.clock_due or self._gpus.due:
            return True
        return self._tput.pending and self.clock() - self._drawn_at >= REDRAW_ANYWAY_S

    @property
    def _news(self) -> bool:
        """Anything but GPU samples changed since the last draw (a bench finished too)."""
        return self.watch.fingerprint_but_gpu != self._drawn or (
            self.ctl is not None and self.ctl.bench is not self._drawn_bench
        )

    def on_line_chart_resized(self, message: LineChart.Resized) -> None:
        message.stop()
        self._drawn = None  # draw all next frame, the chart at its size
        self._wake()

    def refresh_from_watch(self) -> None:
        """Draw what changed: all of it on news; else the run clock, the GPU rows and
        a chart that was waiting."""
        w = self.watch
        if not all(p.is_mounted for p in (self._warmup, self._tput, self._gpus, self._log_pane)):
            return  # a wake before the pane is built: the app's idle tick comes back
        if hidden(self):
            self.log_pane.add(*w.take_lines(), draw=False)
            self._tput.observe(w.state)
            return
        if not self._news:
            self._header.show(w)
            self._gpus.show(alone=True)
            if self._tput.pending:
                self._drawn_at = self.clock()
                ctl = self.ctl if isinstance(self.ctl, Controller) else None
                self._tput.show(w, ctl, alone=True)
            return
        self._drawn, self._drawn_at = w.fingerprint_but_gpu, self.clock()
        self._drawn_bench = self.ctl.bench if self.ctl is not None else None
        lines, dropped = w.take_lines()
        self.log_pane.add(lines, dropped)
        s = w.state
        self._header.show(w)
        self._note.display = bool(w.note)
        show(self._note, w.note)
        if self.log_pane.border_subtitle != w.source:
            self.log_pane.border_subtitle = w.source
        self._banner.show(s)
        ctl = self.ctl
        if ctl is None:
            self._warmup.show(s)
        else:
            probe = ctl.probe if isinstance(ctl, PodController) else None
            self._warmup.show(s, ctl.reference_warmup_s, ctl.ready_eta(), probe)
        self._tput.show(w, ctl if isinstance(ctl, Controller) else None)
        self._gpus.show()

    @property
    def stacked(self) -> bool:
        """The panels sit above the log (key l), not beside it."""
        return self._stacked

    def toggle_layout(self) -> None:
        # Inline styles on the few nodes that move, not a CSS class: a class change
        # restyles every widget below it, ~40 % of the key's time to the screen.
        self._stacked = stacked = not self._stacked
        body, panels = self._body, self._panels
        # None clears an inline rule: the stylesheet's layout (beside) applies again.
        body.styles.layout = "vertical" if stacked else None
        panels.styles.width, panels.styles.height = ("1fr", "auto") if stacked else (None, None)
        panels.styles.layout = "horizontal" if stacked else None
        for part in (self._warmup, self._tput, self._gpus):
            part.styles.width = "1fr" if stacked else None
