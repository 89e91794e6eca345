"""Generation tok/s: sparkline of recent samples, current value and load."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Sparkline, Static

from sgwatch.core.state import ServerState, seconds_between
from sgwatch.ui.quiet import show
from sgwatch.ui.widgets.chart import LineChart

SPARK_POINTS = 120


class ThroughputPanel(Vertical):
    DEFAULT_CSS = """
    ThroughputPanel { height: auto; border: round $panel; padding: 0 1; }
    ThroughputPanel Sparkline { height: 3; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="tput-now")
        yield Sparkline([], id="tput-spark")
        yield Static(id="tput-load")
        yield LineChart("seconds before the latest sample", "tok/s", id="tput-chart")

    def on_mount(self) -> None:
        self.border_title = "Throughput (decode log lines)"

    def show(self, s: ServerState) -> None:
        t = s.throughput
        now = self.query_one("#tput-now", Static)
        if not t.samples:
            show(now, "no decode samples yet")
        else:
            show(
                now,
                f"[b]{t.last:,.1f}[/b] tok/s · median {t.median:,.1f} · max {t.max:,.1f}"
                f"\n{t.samples:,} samples",
            )
        values = [v for _, v in list(t.history)[-SPARK_POINTS:]]
        spark = self.query_one("#tput-spark", Sparkline)
        spark.display = bool(values)
        if spark.data != values:
            spark.data = values
        load = []
        if (d := s.last_decode) is not None:
            for key, label in (("#running-req", "running"), ("#queue-req", "queued")):
                if (v := d.number(key)) is not None:
                    load.append(f"{label} {v:.0f}")
            if (u := d.number("token usage")) is not None:
                load.append(f"token usage {u:.0%}")
        if (a := t.accept_len_mean) is not None:
            load.append(f"accept len {a:.2f}")
        show(self.query_one("#tput-load", Static), "   ".join(load))
        chart = self.query_one("#tput-chart", LineChart)
        chart.display = len(t.history) >= 2
        if chart.display:
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
