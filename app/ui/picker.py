"""Several servers on one host: which one to watch (enter picks, esc takes the newest)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from sgwatch.core.cmdline import LaunchError, parse
from sgwatch.engines import by_name
from sgwatch.remote.discover import ServerProcess


def describe(server: ServerProcess) -> str:
    """pid, how it was started, its model, where its output goes: one line."""
    try:
        model = by_name(server.engine).model_of(parse(server.argv)) or "?"
    except LaunchError:  # a command line the parser refuses still gets its row
        model = "?"
    where = server.source.label if server.source is not None else server.log or "no log"
    return f"pid {server.pid}  {server.kind}  {model}  {where}"


class ServerPicker(ModalScreen[ServerProcess | None]):
    BINDINGS = [Binding("escape", "dismiss_newest", "newest")]
    DEFAULT_CSS = """
    ServerPicker { align: center middle; }
    ServerPicker > Vertical { width: 100; height: auto; max-height: 80%;
                              border: round $accent; background: $surface; padding: 1 2; }
    ServerPicker OptionList { height: auto; max-height: 20; }
    """

    def __init__(self, host: str, servers: list[ServerProcess]) -> None:
        super().__init__()
        self.host, self.servers = host, servers

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                f"[b]{len(self.servers)} servers on {self.host}[/b], newest first. "
                "Enter: watch it; esc: the newest."
            )
            yield OptionList(*(Option(describe(s)) for s in self.servers))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.servers[event.option_index])

    def action_dismiss_newest(self) -> None:
        self.dismiss(None)
