"""`f`: the server's flags, edited by keyboard, and the restart that applies them.

A table of every option the server accepts (grouped; set and changed ones
first in each group), the pending diff against the running command, and what
the server runs with where it overrode the command. space toggles a switch,
enter edits a value, delete removes a flag; R restarts with the edits, u rolls
back to the last command that reached ready, h shows the history. After a crash
whose message names a flag change that avoids it (the engine's remedy), F restarts
with that change.
"""

from __future__ import annotations

import contextlib

from rich.markup import escape
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import RowDoesNotExist

from sgwatch.control import flagedit
from sgwatch.control.controller import Controller
from sgwatch.control.node_group import NodeGroup, restart_nodes
from sgwatch.control.podcontrol import PodController
from sgwatch.control.restart import Preflight, RestartFailed
from sgwatch.core.cmdline import LaunchCommand, LaunchError, masked, value_of
from sgwatch.core.events import Remedy
from sgwatch.engines import Catalog, FlagOption
from sgwatch.live.watch import Watch
from sgwatch.ui.modals import ConfirmRestart, EditValue, HistoryScreen
from sgwatch.ui.widgets.footer import Footer

_GROUP = "group:"
_COLUMNS = (("", 2), ("flag", 38), ("value", 16), ("running", 12), ("default", 12), ("runs as", 12))
_LONG = 60  # characters of a value shown beside the table


class FlagPanel(Screen[None]):
    BINDINGS = [
        Binding("space", "toggle", "toggle"),
        Binding("enter", "edit", "edit"),
        Binding("delete,backspace", "remove", "remove"),
        Binding("R", "restart", "restart with these"),
        Binding("u", "rollback", "roll back"),
        # Shown where it applies: in the box that says the crash's fix.
        Binding("F", "remedy", "restart with the crash's fix", show=False),
        Binding("h", "history", "history"),
        Binding("slash", "search", "search"),
        Binding("escape", "close", "back"),
    ]
    DEFAULT_CSS = """
    FlagPanel #flag-title { height: auto; padding: 0 1; background: $boost; }
    FlagPanel #flag-search { margin: 0 1; }
    FlagPanel #flag-body { height: 1fr; }
    FlagPanel #flags { width: 1fr; }
    FlagPanel #flag-side { width: 1fr; min-width: 36; max-width: 46; padding: 0 1;
                           overflow-y: auto; }
    FlagPanel #pending { height: auto; border: round $accent; padding: 0 1; }
    FlagPanel #remedy { height: auto; border: round $error; padding: 0 1; }
    FlagPanel #speed { height: auto; border: round $warning; padding: 0 1; }
    FlagPanel #effective { height: auto; border: round $secondary; padding: 0 1; }
    FlagPanel #flag-status { height: auto; max-height: 8; padding: 0 1; }
    FlagPanel #flag-status.error { color: $error; }
    """

    def __init__(
        self, ctl: Controller | PodController, watch: Watch, nodes: NodeGroup | None = None
    ) -> None:
        super().__init__()
        self.ctl, self.watch = ctl, watch
        self.nodes = nodes  # the other nodes of a multi-node server restart with this one
        self.resolved: dict = {}  # /server_info, when the log has no server_args line
        self.catalog: Catalog | None = None
        self.running: LaunchCommand | None = ctl.current
        self.pending: LaunchCommand | None = self.running

    def compose(self) -> ComposeResult:
        yield Static(
            f"[b]flags[/b] · {escape(self.watch.label)} · reading the catalog…", id="flag-title"
        )
        yield Input(placeholder="/ search flags (name, help, group)", id="flag-search")
        with Horizontal(id="flag-body"):
            yield DataTable(id="flags", cursor_type="row", zebra_stripes=True)
            with Vertical(id="flag-side"):
                yield Static(id="remedy")
                yield Static(id="pending")
                yield Static(id="speed")
                yield Static(id="effective")
        # Below the table, across the screen: a refusal is never below a long side column.
        yield Static(id="flag-status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for label, width in _COLUMNS:
            table.add_column(label, width=width)
        self.query_one("#pending", Static).border_title = "pending changes"
        self.query_one("#remedy", Static).border_title = "the crash's fix"
        self.query_one("#speed", Static).border_title = "changed by the server, costs speed"
        self.query_one("#effective", Static).border_title = "server filled in or overrode"
        self.query_one("#flag-status", Static).display = False
        table.focus()
        self._load()

    @work(group="catalog")
    async def _load(self) -> None:
        if self.running is None:
            self._status("no discovered server: the flag panel needs one (--log skips discovery)")
            return
        sel = await self.ctl.catalog()
        self.catalog = sel.catalog
        self.query_one("#flag-title", Static).update(
            f"[b]flags[/b] · {escape(self.watch.label)} · {len(sel.catalog.options)} options "
            f"· {escape(sel.note)}"
        )
        self._refill()
        if not self.watch.state.args:  # a log without its server_args line: ask the server
            self.resolved = await self.ctl.server_settings()
            if self.resolved:
                box = self.query_one("#effective", Static)
                box.border_title = "server filled in or overrode (/server_info)"
                self._refill()

    # -- drawing ----------------------------------------------------------------

    def _refill(self, keep: str | None = None) -> None:
        if self.catalog is None or self.running is None or self.pending is None:
            return
        table = self.query_one(DataTable)
        keep = keep or self._cursor_key()
        table.clear()
        query = self.query_one("#flag-search", Input).value
        resolved = self.watch.state.args or self.resolved
        diffs = self.ctl.engine.differences(self.running, resolved, self.catalog)
        speed = self.ctl.engine.speed_changes(resolved, self.running, self.watch.state.weights.arch)
        for group, found in flagedit.rows(
            self.catalog, self.running, self.pending, diffs, query
        ).items():
            table.add_row("", Text(group, style="bold"), "", "", "", "", key=_GROUP + group)
            for row in found:
                table.add_row(*_cells(row), key=row.option.name)
        if keep is not None:
            with contextlib.suppress(RowDoesNotExist):  # filtered out now
                table.move_cursor(row=table.get_row_index(keep))
        self._show_side(diffs, speed)

    def _show_side(self, diffs, speed) -> None:
        self._show_remedy()
        changes = flagedit.describe_changes(self.running, self.pending, self.catalog)
        text = "\n".join(changes) if changes else "none: R restarts with the same command"
        if changes:
            text += "\n\nR restart with these · u roll back"
        self.query_one("#pending", Static).update(escape(text))
        box = self.query_one("#speed", Static)
        box.display = bool(speed)
        box.update(
            "\n".join(
                f"[b]{escape(d.effect)}[/b]: {escape(d.why)}"
                + (f"\n  override: {escape(d.override_flag)}" if d.override_flag else "")
                for d in speed
            )
        )
        # The rest: values the server filled in (defaults it computed, choices it made).
        costly = {d.setting for d in speed}
        eff = [
            f"{d.option} = {_short(flagedit.show(d.effective))}"
            + (
                f" (asked {_short(flagedit.show(d.requested))})"
                if d.reason == "overridden"
                else " (auto)"
            )
            for d in diffs
            if d.setting not in costly
        ]
        self.query_one("#effective", Static).update(
            escape("\n".join(eff)) if eff else "nothing (or no server_args line yet)"
        )

    def _remedy(self) -> Remedy | None:
        crash = self.watch.state.crash
        return None if crash is None else crash.remedy

    def _show_remedy(self) -> None:
        box, remedy = self.query_one("#remedy", Static), self._remedy()
        box.display = remedy is not None
        if remedy is not None:
            box.update(escape(f"{remedy.advice}\n\nF restart with it"))

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#flag-status", Static)
        status.set_class(error, "error")
        status.display = bool(text)  # no empty line under the table
        status.update(escape(text))

    def _cursor_key(self) -> str | None:
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def _selected(self) -> FlagOption | None:
        key = self._cursor_key()
        if self.catalog is None or key is None or key.startswith(_GROUP):
            return None
        return self.catalog.get(key)

    # -- editing ------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        self._refill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(DataTable).focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_edit()

    def _apply(self, change) -> None:
        opt = self._selected()
        if opt is None or self.pending is None:
            return
        try:
            self.pending = change(self.pending, opt, self.catalog)
        except LaunchError as e:
            self._status(str(e), error=True)
            return
        self._status("")
        self._refill(keep=opt.name)

    def action_toggle(self) -> None:
        opt = self._selected()
        if opt is not None and opt.takes_value:
            self.action_edit()
        else:
            self._apply(flagedit.toggle)

    def action_edit(self) -> None:
        opt = self._selected()
        if opt is None or self.pending is None:
            return
        if not opt.takes_value:
            self._apply(flagedit.toggle)
            return
        current = flagedit.show(value_of(self.pending, opt.name, self.catalog.ref))

        def check(text: str) -> str | None:
            try:
                flagedit.edit(self.pending, opt, text, self.catalog)
            except LaunchError as e:
                return str(e)
            return None

        def done(text: str | None) -> None:
            if text is not None:
                self._apply(lambda cmd, o, c: flagedit.edit(cmd, o, text, c))

        self.app.push_screen(EditValue(opt, current, check), done)

    def action_remove(self) -> None:
        self._apply(flagedit.remove)

    def action_search(self) -> None:
        self.query_one("#flag-search", Input).focus()

    def action_close(self) -> None:
        search = self.query_one("#flag-search", Input)
        if search.has_focus:
            self.query_one(DataTable).focus()
        else:
            self.dismiss()

    def action_history(self) -> None:
        self.app.push_screen(HistoryScreen(self.watch.label, self.ctl.history.runs()))

    # -- restarting ---------------------------------------------------------------

    def action_restart(self) -> None:
        if self.pending is not None:
            self._restart(self.pending, "restart with these flags")

    def action_remedy(self) -> None:
        remedy = self._remedy()
        if remedy is None or self.running is None or self.catalog is None:
            self._status("no crash with a known fix", error=True)
            return
        try:
            target = flagedit.apply_remedy(self.running, remedy, self.catalog)
        except LaunchError as e:
            self._status(str(e), error=True)
            return
        self._restart(target, f"restart with the crash's fix: {remedy.advice}")

    def action_rollback(self) -> None:
        try:
            target = self.ctl.rollback_target()
        except RestartFailed as e:
            self._status(e.message, error=True)
            return
        self._restart(target, "roll back to the last command that reached ready")

    @work(group="restart", exclusive=True)
    async def _restart(self, target: LaunchCommand, title: str) -> None:
        if self.ctl.busy:
            self._status("a restart is already in progress", error=True)
            return
        judge = "the flag catalog" if isinstance(self.ctl, PodController) else "the host's parser"
        self._status(f"checking the new command with {judge}…")
        check = await self.ctl.preflight(target)
        if not check.ok:
            lines = [f"{p.flag}: {p.message}" if p.flag else p.message for p in check.errors]
            self._status("refused; the server was not touched:\n" + "\n".join(lines), error=True)
            return
        if isinstance(self.ctl, PodController):
            await self._restart_pod(target, title, check)
            return
        server = self.ctl.session.server
        stop = (
            f"pid {server.pid} gets SIGTERM, SIGKILL after 30 s; its log is kept."
            if server is not None
            else ""
        )
        if self.nodes is not None:
            stop = (
                f"All nodes of the {self.nodes.describe()} restart with these changes: "
                "each gets SIGTERM (the highest rank first), then rank 0 starts first."
            )
        changes = flagedit.describe_changes(self.running, target, self.catalog)
        confirm = ConfirmRestart(title, changes, masked(target).shell, check, stop)
        if not await self.app.push_screen(confirm, wait_for_dismiss=True):
            self._status("not restarted")
            return
        self._status("restarting: stopping the server, waiting for its GPU memory…")
        try:
            if self.nodes is not None:
                launched = (await restart_nodes(self.nodes, self.ctl, target))[0]
            else:
                launched = await self.ctl.restart(target)
        except RestartFailed as e:
            self._status(f"restart failed ({e.stage}): {e.message}", error=True)
            return
        kept = f"; old log kept as {launched.kept}" if launched.kept else ""
        self.app.notify(f"{self.watch.label}: restarted, pid {launched.pid}{kept}", title="sgwatch")
        self.dismiss()

    async def _restart_pod(self, target: LaunchCommand, title: str, check: Preflight) -> None:
        """A pod's owner restarts: the same flags by a rollout restart, edited ones by the
        exact patch shown; either only once confirmed, and the new pod followed."""
        ctl = self.ctl
        assert isinstance(ctl, PodController)
        try:
            step, warned = await ctl.plan(target)
        except RestartFailed as e:
            self._status(f"refused: {e.message}", error=True)
            return
        changes = flagedit.describe_changes(self.running, target, self.catalog)
        shown = Preflight([*check.problems, *warned], check.checked_by)
        follow = f"{step.owner} makes a new pod; it is followed from its start to ready."
        confirm = ConfirmRestart(title, changes, step.shown, shown, follow)
        if not await self.app.push_screen(confirm, wait_for_dismiss=True):
            self._status("not restarted")
            return
        self._status(f"applying to {step.owner}, waiting for its new pod…")
        try:
            pod = await ctl.apply(step)
        except RestartFailed as e:
            self._status(f"restart failed ({e.stage}): {e.message}", error=True)
            return
        self.app.notify(f"{self.watch.label}: {step.owner} restarted; following pod/{pod}")
        self.dismiss()


def _cells(row: flagedit.Row) -> tuple:
    opt = row.option
    mark = "●" if row.changed else ("✎" if row.value else "")
    if row.effective is not None:
        mark += "≠"
    name = Text(opt.name, style="bold" if row.value else "")
    if opt.deprecated:
        name.append(" (deprecated)", style="dim")
    value = Text(row.value, style="bold yellow" if row.changed else "")
    return mark, name, value, row.running, row.default, row.effective or ""


def _short(text: str) -> str:
    return text if len(text) <= _LONG else text[: _LONG - 1] + "…"
