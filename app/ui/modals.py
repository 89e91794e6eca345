"""Small dialogs of the flag panel: edit a value, confirm a restart, the restart history."""

from __future__ import annotations

import time

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import DataTable, Input, Static

from sgwatch.control.history import Run
from sgwatch.control.restart import Preflight
from sgwatch.engines import FlagOption

_BOX = """
{name} {{ align: center middle; }}
{name} > Vertical {{ width: 110; max-width: 95%; height: auto; max-height: 90%;
    border: round $accent; background: $surface; padding: 1 2; }}
"""


class EditValue(ModalScreen[str | None]):
    """A flag's value: enter sets it (empty removes the flag), esc cancels.
    `check` returns why a value is refused, or None; the dialog stays open until it passes."""

    BINDINGS = [Binding("escape", "dismiss(None)", "cancel")]
    DEFAULT_CSS = _BOX.format(name="EditValue") + "EditValue #why { color: $error; }"

    def __init__(self, opt: FlagOption, value: str, check) -> None:
        super().__init__()
        self.opt, self.value, self.check = opt, value, check

    def compose(self) -> ComposeResult:
        opt = self.opt
        kind = f"{opt.type or 'str'}" + (f", {opt.nargs} values" if opt.nargs else "")
        choices = [str(c) for c in opt.choices or ()]
        with Vertical():
            yield Static(f"[b]{escape(opt.name)}[/b]  ({kind}; default {opt.start_value!r})")
            if opt.help:
                yield Static(escape(opt.help[:400]))
            if choices:
                yield Static("choices: " + escape(", ".join(choices)))
            yield Input(
                self.value,
                placeholder="empty: remove the flag",
                suggester=SuggestFromList(choices, case_sensitive=False) if choices else None,
            )
            yield Static(id="why")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        why = self.check(event.value)
        if why:
            self.query_one("#why", Static).update(escape(why))
        else:
            self.dismiss(event.value)


class ConfirmRestart(ModalScreen[bool]):
    """The diff and the exact command; y / enter restarts (or launches: `verb`), n / esc
    does not."""

    BINDINGS = [
        Binding("y,enter", "dismiss(True)", "restart"),
        Binding("n,escape", "dismiss(False)", "cancel"),
    ]
    DEFAULT_CSS = _BOX.format(name="ConfirmRestart") + "ConfirmRestart .warn { color: $warning; }"

    def __init__(
        self,
        title: str,
        changes: list[str],
        command: str,
        check: Preflight,
        stop: str,
        verb: str = "restart",
    ) -> None:
        super().__init__()
        self.title_text, self.changes, self.command = title, changes, command
        self.check, self.stop, self.verb = check, stop, verb

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"[b]{escape(self.title_text)}[/b]\n")
            yield Static(escape("\n".join(self.changes) or "(no flag changes: same command)"))
            for p in self.check.problems:
                flag = f"{p.flag}: " if p.flag else ""
                yield Static(escape(f"⚠ {flag}{p.message}"), classes="warn")
            yield Static(f"\n[b]command[/b]\n{escape(self.command)}\n")
            yield Static(escape(f"checked by {self.check.checked_by}. {self.stop}"))
            yield Static(f"\n[b]y[/b] {self.verb}   [b]n[/b] cancel")


class HistoryScreen(ModalScreen[None]):
    """Every recorded run of this host, newest first."""

    BINDINGS = [Binding("escape,h,q", "dismiss", "close")]
    DEFAULT_CSS = _BOX.format(name="HistoryScreen") + "HistoryScreen DataTable { height: auto; }"

    def __init__(self, host: str, runs: list[Run]) -> None:
        super().__init__()
        self.host, self.runs = host, runs

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"[b]restarts on {escape(self.host)}[/b] ({len(self.runs)} recorded)")
            if not self.runs:
                yield Static("nothing recorded yet: runs are recorded once they reach ready")
            yield DataTable(cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("when", "outcome", "warmup", "tok/s", "pid", "flags")
        for run in reversed(self.runs):
            flags = " ".join(t for f in run.command.flags for t in f.tokens)
            table.add_row(
                time.strftime("%m-%d %H:%M", time.localtime(run.time)),
                run.outcome + (f": {run.note[:40]}" if run.note else ""),
                f"{run.warmup_seconds:.0f} s" if run.warmup_seconds is not None else "",
                f"{run.tok_s:.1f}" if run.tok_s is not None else "",
                str(run.pid or ""),
                flags[:90],
            )
