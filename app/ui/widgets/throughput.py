"""Generation tok/s: the current value, load, the roofline, and a chart of the samples.

Two sources feed it: the decode log lines (always), and the server's /metrics
when it runs with --enable-metrics and the poller has a window (it then shows
prompt tok/s and TTFT / inter-token latency too). The title names the source.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.markup import escape
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from sgwatch.control.batch1 import Batch1Samples, batch1_roofline
from sgwatch.control.controller import Controller
from sgwatch.core.state import ServerState, seconds_between
from sgwatch.engines import MetricsWindow
from sgwatch.live.watch import Watch
from sgwatch.ui.quiet import show
from sgwatch.ui.widgets.chart import LineChart

LOG_TITLE, METRICS_TITLE = "Throughput (decode log lines)", "Throughput (/metrics)"


class ThroughputPanel(Vertical):
    DEFAULT_CSS = """
    ThroughputPanel { height: auto; border: round $panel; padding: 0 1; }
    ThroughputPanel #tput-assume { color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, **kwargs) -> None:
        super().__init__(**kwargs)
        self._batch1 = Batch1Samples()
        # Kept, not queried: `show` runs on every frame with news, and a query walks
        # the DOM matching selectors.
        self._now = Static(id="tput-now")
        self._load = Static(id="tput-load")
        self._roof = Static(id="tput-roof")
        self._assume = Static(id="tput-assume")  # one line; the tooltip has all of it
        self._chart = LineChart("seconds before the latest sample", "tok/s", clock, id="tput-chart")

    def compose(self) -> ComposeResult:
        yield self._now
        yield self._load
        yield self._roof
        yield self._assume
        yield self._chart

    def on_mount(self) -> None:
        self.border_title = LOG_TITLE

    @property
    def pending(self) -> bool:
        """The chart (shown) has data it has not drawn yet."""
        return self._chart.display and self._chart.pending

    def observe(self, s: ServerState) -> None:
        """Take the batch-1 decode sample, if the latest line is one (also while hidden)."""
        self._batch1.observe(s)

    def show(self, w: Watch, ctl: Controller | None = None, alone: bool = False) -> None:
        """`alone`: nothing else on the screen changes in this update."""
        s, m = w.state, w.metrics
        title = LOG_TITLE if m is None else METRICS_TITLE
        if self.border_title != title:
            self.border_title = title
        if m is None:
            self._show_log(s, alone)
        else:
            self._show_metrics(s, m, w, alone)
        self.observe(s)
        bench = ctl.bench if ctl is not None else None
        c1 = next((p for p in bench.phases if p.concurrency == 1), None) if bench else None
        roof, source = batch1_roofline(
            s,
            w.gpu,
            self._batch1,
            c1.decode_tok_s if c1 else None,
            bench.accept_length if bench else None,
            ctl.session.profile.gpu_bandwidth_gbps if ctl is not None else None,
        )
        show(self._roof, escape(roof.said(source)))
        assume = self._assume
        assume.display = roof.ceiling_tok_s is not None
        if assume.display and assume.tooltip != roof.assumptions:
            assume.tooltip = roof.assumptions
            show(assume, escape(roof.assumptions))

    def _show_metrics(self, s: ServerState, m: MetricsWindow, w: Watch, alone: bool) -> None:
        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v * 1000:,.0f} ms"

        gen, prompt = m.gen_tok_s or 0.0, m.prompt_tok_s or 0.0
        show(
            self._now,
            f"[b]{gen:,.1f}[/b] tok/s · prompt {prompt:,.1f} tok/s"
            f"\nTTFT p50 {ms(m.ttft_p50)} · ITL p50 {ms(m.itl_p50)} (last 30 s)",
        )
        history = list(w.metrics_history)
        load = []
        for value, label in ((m.running, "running"), (m.queued, "queued")):
            if value is not None:
                load.append(f"{label} {value:.0f}")
        if m.token_usage is not None:
            load.append(f"token usage {m.token_usage:.0%}")
        accept = m.accept_length if m.accept_length is not None else s.throughput.accept_len_mean
        if accept is not None:
            load.append(f"accept len {accept:.2f}")
        show(self._load, "   ".join(load))
        chart = self._chart
        chart.display = len(history) >= 2
        if chart.display and chart.wants(history[-1], alone):
            newest = history[-1][0]
            chart.plot([("gen", [t - newest for t, _ in history], [v for _, v in history])])

    def _show_log(self, s: ServerState, alone: bool) -> None:
        t = s.throughput
        now = self._now
        if not t.samples:
            show(now, "no decode samples yet")
        else:
            show(
                now,
                f"[b]{t.last:,.1f}[/b] tok/s · median {t.median:,.1f} · max {t.max:,.1f}"
                f"\n{t.samples:,} samples",
            )
        load = []
        if (d := s.last_decode) is not None:
            for key, label in (("#running-req", "running"), ("#queue-req", "queued")):
                if (v := d.number(key)) is not None:
                    load.append(f"{label} {v:.0f}")
            if (u := d.number("token usage")) is not None:
                load.append(f"token usage {u:.0%}")
        if (a := t.accept_len_mean) is not None:
            load.append(f"accept len {a:.2f}")
        show(self._load, "   ".join(load))
        chart = self._chart
        chart.display = len(t.history) >= 2
        if chart.display and chart.wants(t.samples, alone):  # building the series costs ms
            chart.plot([("gen", *_seconds_ago(list(t.history)))])


def _seconds_ago(history: list[tuple[str | None, float]]) -> tuple[list[float], list[float]]:
    """x: seconds before the newest sample (log time); samples without a stamp are skipped."""
    newest = history[-1][0]
    xs, ys = [], []
    for ts, value in history:
        if (ago := seconds_between(ts, newest)) is not None:
            xs.append(-ago)
            ys.append(value)
    return xs, ys
