"""A plotext line chart with axes and units, rebuilt at most every 2 s.

plotext draws into module-level state and its build is slow (tens of ms), so
charts are redrawn on the UI thread only, and only when 2 s have passed
and the data or the size changed. Its cost grows with the points drawn, so a
long series is first cut to the two braille dots a column can show: each
bucket keeps its lowest and highest point, so spikes stay visible (an hour of
samples built in ~60 ms, cut to the chart's width in ~10 ms).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import plotext as plt
from rich.text import Text
from textual.message import Message
from textual.widgets import Static

Series = tuple[str, list[float], list[float]]  # label, xs, ys

MIN_INTERVAL_S = 2.0


class LineChart(Static):
    DEFAULT_CSS = "LineChart { height: 10; }"

    class Resized(Message):
        """Its size changed (a resize, a layout toggle, shown): plot it again."""

    def on_resize(self) -> None:
        self.post_message(self.Resized())

    def __init__(
        self,
        xlabel: str,
        ylabel: str,
        clock: Callable[[], float] = time.monotonic,  # tests advance a clock of their own
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.xlabel, self.ylabel = xlabel, ylabel
        self._clock = clock
        self._drawn: tuple = ()
        self._at = 0.0
        self._wanted: tuple = ()
        self.pending = False  # data turned down for now, to draw on a later frame

    def wants(self, version: object, alone: bool = False) -> bool:
        """Should the caller build its series and `plot`? Once for each new `version`
        of the data (cheap to compute, unlike a series of thousands of points) or size,
        and only when `plot` would draw now: in the frame that brought the data.
        `alone`: nothing else repaints in this frame; a screen update costs Textual
        a repaint of most of the screen, so a chart waits twice as long to cause one.
        A version not drawn yet leaves `pending` set: ask again on a later frame."""
        key = (version, self.size)
        if key == self._wanted:
            self.pending = False
            return False
        wait = MIN_INTERVAL_S * (2 if alone else 1)
        self.pending = self._clock() - self._at < wait
        if self.pending:
            return False
        self._wanted = key
        return True

    def plot(self, series: list[Series]) -> None:
        key = (
            self.size.width,
            self.size.height,
            tuple((s[0], len(s[1]), s[2][-1:]) for s in series),
        )
        self.pending = key != self._drawn and self._clock() - self._at < MIN_INTERVAL_S
        if key == self._drawn or self.pending:
            return
        width, height = self.size.width, self.size.height
        if width < 20 or height < 5 or not any(xs for _, xs, _ in series):
            # Not laid out yet: drawn once it has a size (Resized). Too small: a new
            # size is a new key, nothing to wait for.
            self.pending = not self.size.area and any(xs for _, xs, _ in series)
            return
        self._drawn, self._at = key, self._clock()
        plt.clear_figure()
        plt.plotsize(width, height)
        plt.theme("clear")
        for label, xs, ys in series:
            xs, ys = envelope(xs, ys, 2 * width)
            plt.plot(xs, ys, label=label if len(series) > 1 else None, marker="braille")
        plt.xlabel(self.xlabel)
        plt.ylabel(self.ylabel)
        self.update(Text.from_ansi(plt.build()), layout=False)  # its size is set by CSS


def envelope(xs: list[float], ys: list[float], points: int) -> tuple[list[float], list[float]]:
    """At most ~`points` points: each bucket's lowest and highest, in x order."""
    if len(xs) <= points:
        return xs, ys
    step = -(-len(xs) // (points // 2))  # ceil: points // 2 buckets of two points
    out_x: list[float] = []
    out_y: list[float] = []
    for start in range(0, len(xs), step):
        bucket = range(start, min(start + step, len(xs)))
        lo = min(bucket, key=ys.__getitem__)
        hi = max(bucket, key=ys.__getitem__)
        for i in sorted({lo, hi}):
            out_x.append(xs[i])
            out_y.append(ys[i])
    return out_x, out_y
