"""The fleet table: one row per server, whichever source fills it (Prometheus, SSH hosts).

`FleetView.show` takes a snapshot; the view filters, sorts and groups its rows, marks
the rows whose state just changed, and hands the table (widgets/fleet_grid.py) each
row's text per column: it draws again only the lines on screen whose text changed.
`enter` on a row posts `FleetView.Open` with it: the app decides what opening means.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.events import Key
from textual.message import Message
from textual.widgets import Input, Static

from sgwatch.core.display import duration
from sgwatch.fleet.row import FleetRow
from sgwatch.fleet.source import FleetSnapshot
from sgwatch.ui.fleet_cells import (
    COLUMNS,
    GROUPS,
    SORTS,
    cells,
    counts,
    group_of,
    matches,
    ordered,
    state_text,
    summary,
)
from sgwatch.ui.quiet import show
from sgwatch.ui.widgets.fleet_grid import HEADING, FleetTable

MARK_S = 10.0  # how long a row whose state changed keeps its mark


class FleetView(Vertical):
    """Status line, table, the highlighted row's full state, and the filter."""

    DEFAULT_CSS = """
    FleetView { height: 1fr; }
    FleetView > #fleet-status { height: auto; padding: 0 1; background: $panel; }
    FleetView > #fleet-problem { height: auto; padding: 0 1; color: $error; display: none; }
    FleetView > #fleet-warnings { height: auto; padding: 0 1; color: $warning; display: none; }
    FleetView > #fleet-detail { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    FleetView > Input { dock: bottom; display: none; }
    """
    BINDINGS = [
        Binding("s", "sort", "sort"),
        Binding("S", "reverse", "reverse", show=False),
        Binding("g", "group", "group"),
        Binding("slash", "filter", "filter"),
    ]

    class Open(Message):
        """Enter on a server's row."""

        def __init__(self, row: FleetRow) -> None:
            super().__init__()
            self.row = row

    def __init__(
        self,
        name: str = "",
        clock: Callable[[], float] = time.time,  # the clock rows' `changed_at` is on
        sort: str = "listed",
        live: bool = False,  # rows drawn as they change (SSH), not refreshed on a timer
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.fleet_name = name
        self.live = live
        self.clock = clock
        self.sort = next(s for s in SORTS if s.name == sort)
        self.reverse = False
        self.group: str | None = None
        self.needle = ""
        self.table = FleetTable()
        self._status = Static(id="fleet-status", markup=False)
        self._problem = Static(id="fleet-problem", markup=False)
        self._warnings = Static(id="fleet-warnings", markup=False)
        self._detail = Static(id="fleet-detail", markup=False)
        self._filter = Input(placeholder="filter: instance, model, engine, state", id="filter")
        self._snapshot: FleetSnapshot | None = None
        self._rows: dict[str, FleetRow] = {}
        # key -> ((state, restarted_at), when the view saw it turn to it; None: so since
        # the view opened)
        self._seen: dict[str, tuple[tuple[str, float | None], float | None]] = {}
        self._marked: dict[str, float] = {}  # key -> until when its mark shows
        self._made: dict[str, tuple] = {}  # key -> (row, (since, mark), its texts)
        self._groups: dict[str, str] = {}  # heading key -> the group's full name and states

    def compose(self) -> ComposeResult:
        yield self._status
        yield self._problem
        yield self._warnings
        yield self.table
        yield self._detail
        yield self._filter

    def show(self, snapshot: FleetSnapshot, draw: bool = True) -> None:
        """A new snapshot: remember what changed, then draw (`draw` False: in a hidden
        tab, remembered only, so that "since" and the marks date from the change)."""
        now = self.clock()
        first = self._snapshot is None
        for row in snapshot.rows:
            seen = self._seen.get(row.key)
            if row.state == "stale" and seen is not None:
                continue  # the source's silence is not the server's change: no mark after
            what = (row.state, row.restarted_at)  # a restart never seen down is a change too
            if first:  # the first look has nothing to compare with
                self._seen[row.key] = (what, None)
            elif seen is None or seen[0] != what:
                self._seen[row.key] = (what, now)
                self._marked[row.key] = now + MARK_S
        self._snapshot = snapshot
        self._rows = {r.key: r for r in snapshot.rows}
        if len(self._made) > len(self._rows):  # servers gone: their texts too
            self._made = {k: v for k, v in self._made.items() if k in self._rows}
        if draw:
            self.redraw()

    def redraw(self) -> None:
        snap = self._snapshot
        if snap is None:
            return
        now = self.clock()
        rows = [r for r in snap.rows if matches(r, self.needle)]
        rows = ordered(rows, self.sort, self.reverse)
        lines: list[tuple[str, tuple[str, ...]]] = []
        self._groups.clear()
        if self.group is None:
            lines = [self._line(r, now) for r in rows]
        else:
            groups: dict[str, list[FleetRow]] = {}
            for r in rows:
                groups.setdefault(group_of(r, self.group), []).append(r)
            for name in sorted(groups):
                members = groups[name]
                heading = ("", f"▾ {name}", "", "", counts(members))
                lines.append((HEADING + name, heading + ("",) * (len(COLUMNS) - 5)))
                self._groups[HEADING + name] = f"{self.group} {name}: {summary(members)}"
                lines.extend(self._line(r, now) for r in members)
        self.table.draw(lines)
        self._show_status(snap, len(rows))
        self._show_detail()

    def _line(self, row: FleetRow, now: float) -> tuple[str, tuple[str, ...]]:
        changed = row.changed_at if row.changed_at is not None else self._seen[row.key][1]
        since = "" if changed is None else duration(max(0.0, now - changed))
        marked = self._marked.get(row.key, 0.0) > now
        # A row's text is made again only when the row, its age or its mark changed:
        # a sort or a group key reorders 500 rows without making 7,500 texts.
        made = self._made.get(row.key)
        if made is None or made[0] is not row or made[1] != (since, marked):
            made = self._made[row.key] = (row, (since, marked), cells(row, since, marked))
        return row.key, made[2]

    def _show_status(self, snap: FleetSnapshot, shown: int) -> None:
        parts = [self.fleet_name] if self.fleet_name else []
        parts.append(summary(snap.rows))
        if shown != len(snap.rows):
            parts.append(f"{shown} shown")
        parts.append(f"sort {self.sort.name}" + (" ↑" if self.reverse else ""))
        if self.group:
            parts.append(f"by {self.group}")
        if self.needle:
            parts.append(f"filter “{self.needle}”")
        if not self.live:
            stamp = time.strftime("%H:%M:%S", time.localtime(snap.fetched_at))
            parts.append(f"at {stamp}")
        show(self._status, " │ ".join(parts))
        problem = ""
        if snap.stale:
            why = snap.problem or "the source did not answer"
            kept = "the last values shown" if snap.rows else "nothing seen yet"
            problem = f"⚠ stale: {why}; {kept}"
        elif snap.problem:
            problem = f"⚠ {snap.problem}"
        self._problem.display = bool(problem)
        show(self._problem, problem)
        warns = snap.warnings
        text = f"⚠ {len(warns)} warning{'s' if len(warns) > 1 else ''}: " + "; ".join(warns)
        self._warnings.display = bool(warns)
        show(self._warnings, text if warns else "")

    def _show_detail(self) -> None:
        key = self.table.cursor_key or ""
        row = self._rows.get(key)
        text = self._groups.get(key, "")
        if row is not None:
            if row.host is None:
                where = " (no SSH host: enter cannot open it)"
            elif row.node is not None:  # a pod: its node, and the address that follows it
                where = f" on {row.node} ({row.host})"
            else:
                where = "" if row.host == row.instance else f" → ssh {row.host}"
            text = f"{row.instance}{where}: {state_text(row, full=True)}"
        show(self._detail, text)

    # -- keys -------------------------------------------------------------------

    def action_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self.reverse = False
        self.redraw()

    def action_reverse(self) -> None:
        self.reverse = not self.reverse
        self.redraw()

    def action_group(self) -> None:
        self.group = GROUPS[(GROUPS.index(self.group) + 1) % len(GROUPS)]
        self.redraw()

    def action_filter(self) -> None:
        self._filter.display = True
        self._filter.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.needle = event.value.strip()
        self.redraw()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self._filter.display = bool(self.needle)
        self.table.focus()

    def on_key(self, event: Key) -> None:
        # drop the filter: while typing it, or once applied (the table's own escape)
        if event.key == "escape" and (self._filter.has_focus or self.needle):
            event.stop()
            self._filter.value = ""
            self._filter.display = False
            self.table.focus()

    @on(FleetTable.Highlighted)
    def _highlighted(self) -> None:
        self._show_detail()

    @on(FleetTable.Selected)
    def _selected(self, event: FleetTable.Selected) -> None:
        event.stop()
        row = self._rows.get(event.key)
        if row is not None:  # a group heading opens nothing
            self.post_message(self.Open(row))
