"""One line per GPU: utilisation sparkline and value, memory, power, temperature."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Sparkline, Static

from sgwatch.core.gpu_history import GpuTrack
from sgwatch.live.watch import Watch
from sgwatch.ui.quiet import show
from sgwatch.ui.widgets.chart import LineChart

SPARK_POINTS = 30
# Samples come every 0.5 s. Each screen update costs Textual a repaint of most
# rows of the screen (~5 ms), so GPU rows redraw at most once a second, in an
# update that happens anyway (a log line), and on their own only after 2 s.
ROWS_EVERY_S = 1.0
ROWS_ALONE_S = 2.0


class GpuRow(Horizontal):
    DEFAULT_CSS = """
    GpuRow { height: 1; }
    GpuRow > .index { width: 3; }
    GpuRow > Sparkline { width: 1fr; height: 1; }
    GpuRow > .stats { width: 31; padding-left: 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        # Kept, not queried: a query walks the DOM matching selectors, once a row a second.
        self._index = Static(classes="index")
        self._spark = Sparkline([])
        self._stats = Static(classes="stats")

    def compose(self) -> ComposeResult:
        yield self._index
        yield self._spark
        yield self._stats

    def show(self, index: int, track: GpuTrack) -> None:
        g = track.latest
        show(self._index, str(index))
        spark = self._spark
        values = list(track.util)[-SPARK_POINTS:]
        if spark.data != values:
            spark.data = values
        util = "  n/a" if g.util_pct is None else f"{g.util_pct:4.0f}%"
        mem = (
            f"{g.mem_used_mib / 1024:4.1f}/{g.mem_total_mib / 1024:.0f}G"
            if g.mem_used_mib is not None and g.mem_total_mib
            else "mem n/a"
        )
        power = f"{g.power_w:4.0f}W" if g.power_w is not None else ""
        temp = f"{g.temp_c:3.0f}°C" if g.temp_c is not None else ""
        show(self._stats, f"{util} {mem:>9} {power} {temp}".rstrip())


class GpuPanel(Vertical):
    """Maximised (key g), it also charts every GPU's utilisation and memory history."""

    ALLOW_MAXIMIZE = True

    DEFAULT_CSS = """
    GpuPanel { height: auto; border: round $panel; padding: 0 1; }
    GpuPanel.empty { display: none; }
    GpuPanel > .note { color: $text-muted; }
    GpuPanel > LineChart { display: none; height: 1fr; min-height: 8; }
    GpuPanel.-maximized > LineChart { display: block; }
    """

    _rows_at = 0.0
    _rows_version = -1  # the Watch's gpu_version the rows show

    def __init__(self, watch: Watch, clock: Callable[[], float] = time.monotonic, **kwargs) -> None:
        super().__init__(**kwargs)
        self._watch = watch
        self._clock = clock
        self._note = Static(classes="note")
        self._charts = (
            LineChart("seconds ago", "util %", clock, id="gpu-util-chart"),
            LineChart("seconds ago", "memory GiB", clock, id="gpu-mem-chart"),
        )
        self._rows: list[GpuRow] = []  # one a GPU, in index order

    def compose(self) -> ComposeResult:
        yield self._note
        yield from self._charts

    @property
    def pending(self) -> bool:
        """Samples the rows, or the charts when maximised, do not show yet."""
        return self._new_samples or (
            self.has_class("-maximized") and any(c.pending for c in self._charts)
        )

    @property
    def due(self) -> bool:
        """Is it time to draw samples it does not show yet, with nothing else on the
        screen changing (GPU samples alone)? The rows every ROWS_ALONE_S; maximised,
        at each sample (its charts keep their own pace)."""
        return self.pending if self.has_class("-maximized") else self._rows_due(alone=True)

    @property
    def _new_samples(self) -> bool:
        return bool(self._watch.gpu.gpus) and self._rows_version != self._watch.gpu_version

    def _rows_due(self, alone: bool) -> bool:
        """Samples the rows do not show, and their redraw's time has come."""
        wait = ROWS_ALONE_S if alone else ROWS_EVERY_S
        return self._new_samples and self._clock() - self._rows_at >= wait

    def show(self, alone: bool = False) -> None:
        """`alone`: nothing else on the screen changes in this update."""
        watch = self._watch
        gpus = watch.gpu.gpus
        note = self._note
        show(note, watch.gpu_note)
        note.display = bool(watch.gpu_note)
        self.set_class(not gpus and not watch.gpu_note, "empty")
        names = Counter(t.latest.name for t in gpus.values() if t.latest.name)
        title = "GPUs" + "".join(f": {n} × {name}" for name, n in names.most_common(1))
        if self.border_title != title:
            self.border_title = title
        rows = self._rows
        if len(rows) < len(gpus):
            more = [GpuRow() for _ in range(len(gpus) - len(rows))]
            rows += more
            self.mount_all(more)
            return  # drawn on a later frame, once mounted
        if self._rows_due(alone):
            ready = all(row.is_mounted for row in rows)
            for row, (index, track) in zip(rows, sorted(gpus.items()), strict=False):
                if row.is_mounted:
                    row.show(index, track)
            if ready:  # else the rest draw on the next frame
                self._rows_at, self._rows_version = self._clock(), watch.gpu_version
        if self.has_class("-maximized") and gpus:
            step = watch.gpu_interval_s
            util = [
                (f"GPU{i}", _ago(len(t.util), step), list(t.util)) for i, t in sorted(gpus.items())
            ]
            mem = [
                (f"GPU{i}", _ago(len(t.mem_used), step), [m / 1024 for m in t.mem_used])
                for i, t in sorted(gpus.items())
            ]
            self._charts[0].plot(util)
            self._charts[1].plot(mem)


def _ago(n: int, step: float) -> list[float]:
    return [-(n - 1 - i) * step for i in range(n)]
