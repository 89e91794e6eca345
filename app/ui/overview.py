"""The fleet overview: one row per watched host, the first tab when there are several.

Each row answers "how is that box doing" without opening its tab: the state
badge, warmup progress, tok/s, GPU utilisation, the latest thing that happened,
and the link. Cells are rewritten only when their text changes, so a quiet
fleet costs nothing per frame.
"""

from __future__ import annotations

from textual.widgets import DataTable

from sgwatch.core.display import progress
from sgwatch.live.linkstate import FAILED, LIVE
from sgwatch.live.watch import Watch
from sgwatch.ui.badges import PHASE_LABELS, badge

COLUMNS = (("#", 2), ("host", 14), ("state", 15), ("warmup", 24), ("tok/s", 7), ("GPU", 9),
           ("last", 36), ("link", 12))  # fmt: skip


def row(number: int, w: Watch) -> tuple[str, ...]:
    s = w.state
    text, _ = badge(s.state, w.link)
    return (
        str(number),
        w.label + (f" [{w.node.rank}/{w.node.nnodes}]" if w.node else ""),
        text,
        progress(s),
        "" if s.throughput.last is None else f"{s.throughput.last:.1f}",
        gpus(w),
        last(w),
        "● live" if w.link == LIVE else f"○ {w.link}",
    )


def gpus(w: Watch) -> str:
    util = [t.latest.util_pct for t in w.gpu.gpus.values() if t.latest.util_pct is not None]
    if not util:
        return "–"
    return f"{len(util)}× {sum(util) / len(util):.0f}%"


def last(w: Watch) -> str:
    """The latest thing worth knowing: the crash, the note, or the last phase change."""
    s = w.state
    if s.crash is not None:
        return s.crash.summary
    if w.link == FAILED or not s.phases:
        return w.note
    p = s.phases[-1]
    stamp = (p.started_at or "").split(" ")[-1]
    return f"{stamp} {PHASE_LABELS.get(p.name, p.name)}".strip()


class Overview(DataTable):
    DEFAULT_CSS = "Overview { height: 1fr; }"

    def __init__(self, watches: list[Watch]) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True)
        self.watches = watches
        self._shown: list[tuple[str, ...]] = []
        self._drawn: list[tuple | None] = [None] * len(watches)  # Watch fingerprints

    def on_mount(self) -> None:
        for label, width in COLUMNS:
            self.add_column(label, width=width)
        for i, w in enumerate(self.watches):
            self._shown.append(row(i + 1, w))
            self.add_row(*self._shown[-1], key=str(i))

    def due(self) -> bool:
        return any(
            w.fingerprint != drawn for w, drawn in zip(self.watches, self._drawn, strict=True)
        )

    def show(self) -> None:
        for i, w in enumerate(self.watches):
            if w.fingerprint == self._drawn[i]:
                continue  # a row is made of the Watch alone: nothing new to show
            self._drawn[i] = w.fingerprint
            new, old = row(i + 1, w), self._shown[i]
            for col, (a, b) in enumerate(zip(old, new, strict=True)):
                if a != b:
                    self.update_cell_at((i, col), b)
            self._shown[i] = new
