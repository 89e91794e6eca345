"""A plotext line chart with axes and units, rebuilt at most once a second.

plotext draws into module-level state and its build is slow (tens of ms), so
charts are redrawn on the UI thread only, and only when a second has passed
and the data or the size changed.
"""

from __future__ import annotations

import time

import plotext as plt
from rich.text import Text
from textual.widgets import Static

Series = tuple[str, list[float], list[float]]  # label, xs, ys

MIN_INTERVAL_S = 1.0


class LineChart(Static):
    DEFAULT_CSS = "LineChart { height: 10; }"

    def __init__(self, xlabel: str, ylabel: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.xlabel, self.ylabel = xlabel, ylabel
        self._drawn: tuple = ()
        self._at = 0.0

    def plot(self, series: list[Series]) -> None:
        key = (
            self.size.width,
            self.size.height,
            tuple((s[0], len(s[1]), s[2][-1:]) for s in series),
        )
        if key == self._drawn or time.monotonic() - self._at < MIN_INTERVAL_S:
            return
        width, height = self.size.width, self.size.height
        if width < 20 or height < 5 or not any(xs for _, xs, _ in series):
            return
        self._drawn, self._at = key, time.monotonic()
        plt.clear_figure()
        plt.plotsize(width, height)
        plt.theme("clear")
        for label, xs, ys in series:
            plt.plot(xs, ys, label=label if len(series) > 1 else None, marker="braille")
        plt.xlabel(self.xlabel)
        plt.ylabel(self.ylabel)
        self.update(Text.from_ansi(plt.build()), layout=False)  # its size is set by CSS
