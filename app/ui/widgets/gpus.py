"""One line per GPU: utilisation sparkline and value, memory, power, temperature."""

from __future__ import annotations

from collections import Counter

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Sparkline, Static

from sgwatch.core.gpu_history import GpuTrack
from sgwatch.watch import Watch

SPARK_POINTS = 30


class GpuRow(Horizontal):
    DEFAULT_CSS = """
    GpuRow { height: 1; }
    GpuRow > .index { width: 3; }
    GpuRow > Sparkline { width: 1fr; height: 1; }
    GpuRow > .stats { width: 31; padding-left: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static(classes="index")
        yield Sparkline([])
        yield Static(classes="stats")

    def show(self, index: int, track: GpuTrack) -> None:
        g = track.latest
        self.query_one(".index", Static).update(str(index))
        spark = self.query_one(Sparkline)
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
        self.query_one(".stats", Static).update(f"{util} {mem:>9} {power} {temp}".rstrip())


class GpuPanel(Vertical):
    DEFAULT_CSS = """
    GpuPanel { height: auto; border: round $panel; padding: 0 1; }
    GpuPanel.empty { display: none; }
    GpuPanel > .note { color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        yield Static(classes="note")

    def show(self, watch: Watch) -> None:
        gpus = watch.gpu.gpus
        note = self.query_one(".note", Static)
        note.update(watch.gpu_note)
        note.display = bool(watch.gpu_note)
        self.set_class(not gpus and not watch.gpu_note, "empty")
        names = Counter(t.latest.name for t in gpus.values() if t.latest.name)
        self.border_title = "GPUs" + "".join(f": {n} × {name}" for name, n in names.most_common(1))
        rows = list(self.query(GpuRow))
        if len(rows) < len(gpus):
            self.mount_all(GpuRow() for _ in range(len(gpus) - len(rows)))
            return  # drawn on the next frame, once mounted
        for row, (index, track) in zip(rows, sorted(gpus.items()), strict=False):
            if row.children:
                row.show(index, track)
