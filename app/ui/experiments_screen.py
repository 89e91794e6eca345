"""`e`: the experiments table, one row per run of this host from its history.

Each row's flags are shown as the diff against the baseline row (the oldest
until enter or space picks another), one change a line, whole; the best row
(highest single-request bench tok/s, else highest log tok/s) is starred, and
the bench's figure shows its spread over the requests (`114.5 ± 0.8`). s
cycles the sort column (a header click sorts by that column, again reverses),
x writes CSV and JSON beside the history.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shlex
import textwrap
import time

from rich.markup import escape
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static
from textual.widgets.data_table import RowDoesNotExist

from sgwatch.control import experiments as ex
from sgwatch.control.controller import Controller
from sgwatch.control.flagedit import describe_changes
from sgwatch.control.history import Run
from sgwatch.core.summary import compile_words
from sgwatch.ui.badges import PHASE_LABELS
from sgwatch.ui.widgets.footer import Footer

_DIFF_WIDTH = 30  # the flag diff wraps within this, whole: a row grows a line a change


class ExperimentsScreen(Screen[None]):
    BINDINGS = [
        Binding("space", "baseline", "baseline"),
        Binding("s", "sort", "sort"),
        Binding("x", "export", "export CSV+JSON"),
        Binding("escape", "close", "back"),
    ]
    DEFAULT_CSS = """
    ExperimentsScreen #exp-title { height: auto; padding: 0 1; background: $boost; }
    ExperimentsScreen #experiments { height: 1fr; }
    ExperimentsScreen #exp-detail { height: auto; max-height: 12; border: round $panel;
                                    padding: 0 1; }
    """

    def __init__(self, ctl: Controller) -> None:
        super().__init__()
        self.ctl = ctl
        self.rows: list[ex.Row] = []
        self.baseline: str | None = None
        self.sort_key, self.reverse = "time", False
        self._runs: list[Run] = []
        self._describe: ex.Describe | None = None

    def compose(self) -> ComposeResult:
        yield Static(
            f"[b]experiments[/b] · {escape(self.ctl.session.watch.label)} · reading the history…",
            id="exp-title",
        )
        yield DataTable(id="experiments", cursor_type="row", zebra_stripes=True)
        yield Static(id="exp-detail")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("", key="mark", width=6)
        for col in ex.COLUMNS:
            width = _DIFF_WIDTH if col.key == "diff" else None
            table.add_column(col.label, key=col.key, width=width)
        table.focus()
        self._load()

    @work(group="experiments", exit_on_error=False)
    async def _load(self) -> None:
        catalog = (await self.ctl.catalog()).catalog
        self._describe = lambda old, new: describe_changes(old, new, catalog)
        self._runs = self._live(self.ctl.history.runs())
        self._refill()

    def _live(self, runs: list[Run]) -> list[Run]:
        """The watched run's figures so far: its history record gets them only when it ends."""
        s, run_id = self.ctl.session.watch.state, self.ctl._run_id
        t = s.throughput
        out = []
        for r in runs:
            if r.id == run_id and t.median is not None:
                extra = r.extra
                if t.accept_len_mean is not None:
                    extra = {**extra, "accept_len": t.accept_len_mean}
                r = dataclasses.replace(r, tok_s=t.median, extra=extra)
            out.append(r)
        return out

    def _refill(self) -> None:
        if self._describe is None:
            return
        table = self.query_one(DataTable)
        keep = self._cursor_id()
        self.rows = ex.sort_rows(
            ex.table(self._runs, self.baseline, self._describe), self.sort_key, self.reverse
        )
        table.clear()
        for r in self.rows:
            cells = _cells(r)
            table.add_row(*cells, key=r.id, height=len(cells[3].plain.splitlines()) or 1)
        if keep is not None:
            with contextlib.suppress(RowDoesNotExist):
                table.move_cursor(row=table.get_row_index(keep))
        label = next(c.label for c in ex.COLUMNS if c.key == self.sort_key)
        order = " (reversed)" if self.reverse else ""
        self.query_one("#exp-title", Static).update(
            f"[b]experiments[/b] · {escape(self.ctl.session.watch.label)} · "
            f"{len(self.rows)} run{'s' if len(self.rows) != 1 else ''} · sorted by "
            f"{escape(label)}{order} · ★ best · base: the baseline of the flag diffs · "
            "TTFT: p50 of the bench at concurrency 1"
        )
        self._detail()

    def _cursor_id(self) -> str | None:
        table = self.query_one(DataTable)
        if not self.rows or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row].id

    def _detail(self) -> None:
        rid = self._cursor_id()
        row = next((r for r in self.rows if r.id == rid), None)
        box = self.query_one("#exp-detail", Static)
        if row is None:
            box.update("no runs recorded for this host yet: a run is recorded once it is ready")
            return
        phases = " · ".join(f"{PHASE_LABELS.get(k, k)} {v:.1f} s" for k, v in row.phases.items())
        lines = [
            f"[b]{_when(row.time)}[/b] · {escape(row.outcome)} · "
            + ("the baseline" if row.baseline else "vs the baseline:"),
            *(escape(d) for d in row.diff),
            f"warmup: {escape(phases) or '-'}",
            f"weights {_n(row.weights_gb, ' GB/GPU')} · graphs {_n(row.graph_mem_gb, ' GB')}"
            f" · KV {_n(row.kv_tokens)} tokens",
            f"[dim]{escape(shlex.join(row.argv))}[/dim]",
        ]
        if row.compile_s is not None or row.compile_cache:  # torch.compile said how it went
            took = _n(row.compile_s, " s") if row.compile_s is not None else ""
            lines.insert(-1, compile_words(row.compile_cache, took))
        box.update("\n".join(lines))

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self._detail()

    def on_data_table_row_selected(self, _event: DataTable.RowSelected) -> None:
        self.action_baseline()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        key = event.column_key.value
        if key == "mark":
            return
        self.reverse = not self.reverse if key == self.sort_key else False
        self.sort_key = key
        self._refill()

    def action_baseline(self) -> None:
        if (rid := self._cursor_id()) is not None:
            self.baseline = rid
            self._refill()

    def action_sort(self) -> None:
        keys = [c.key for c in ex.COLUMNS]
        self.sort_key = keys[(keys.index(self.sort_key) + 1) % len(keys)]
        self.reverse = False
        self._refill()

    def action_export(self) -> None:
        if not self.rows:
            self.notify("nothing to export: no runs recorded yet", severity="warning")
            return
        path = self.ctl.history.path
        try:
            csv_path, json_path = ex.export(self.rows, path.parent, path.stem)
        except OSError as e:
            self.notify(f"export failed: {e}", severity="error")
            return
        self.notify(f"exported {csv_path} and {json_path}", timeout=10)

    def action_close(self) -> None:
        self.dismiss()


def _cells(r: ex.Row) -> list[Text]:
    mark = ("★" if r.best else " ") + (" base" if r.baseline else "")
    lines = [part for change in r.diff for part in textwrap.wrap(change, _DIFF_WIDTH)]
    diff = "(baseline)" if r.baseline else "\n".join(lines) or "same flags"
    bench = _n(r.bench_tok_s) + (f" @{r.bench_concurrency}" if r.bench_concurrency else "")
    c1 = _n(r.bench_c1_tok_s)
    if r.bench_c1_tok_s is not None and r.bench_c1_spread is not None:
        c1 += f" ± {r.bench_c1_spread:.1f}"
    cells = [
        mark,
        _when(r.time),
        r.outcome,
        diff,
        _n(r.warmup_s),
        _n(r.graph_mem_gb),
        _n(r.kv_tokens),
        _n(r.log_tok_s),
        c1,
        bench if r.bench_tok_s is not None else "-",
        "-" if r.ttft_s is None else f"{r.ttft_s * 1000:,.0f} ms",
        _n(r.accept_len),
        _compile(r),
    ]
    return [Text(c) for c in cells]  # plain: a flag value may hold `[`


def _compile(r: ex.Row) -> str:
    """ "14.9 hit": torch.compile's seconds, and whether the compile cache served it."""
    if r.compile_s is None and r.compile_cache is None:
        return "-"
    return " ".join(
        x for x in (_n(r.compile_s) if r.compile_s is not None else "", r.compile_cache) if x
    )


def _when(t: float) -> str:
    today = time.strftime("%Y-%m-%d") == time.strftime("%Y-%m-%d", time.localtime(t))
    return time.strftime("%H:%M:%S" if today else "%m-%d %H:%M", time.localtime(t))


def _n(v: float | int | None, unit: str = "") -> str:
    if v is None:
        return "-"
    return (f"{v:,}" if isinstance(v, int) else f"{v:,.1f}") + unit
