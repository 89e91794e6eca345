"""`p` on a pod's tab: the startupProbe block `sgwatch probe-advice` prints, sized from
the workload's recorded warmups, or why there is none yet."""

from __future__ import annotations

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from sgwatch.control.podcontrol import PodController
from sgwatch.control.probes import NoWarmups
from sgwatch.control.restart import RestartFailed


class ProbeAdviceScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,p,q", "dismiss", "close")]
    DEFAULT_CSS = """
    ProbeAdviceScreen { align: center middle; }
    ProbeAdviceScreen > VerticalScroll { width: 100; max-width: 95%; height: auto;
        max-height: 90%; border: round $accent; background: $surface; padding: 1 2; }
    ProbeAdviceScreen #advice-none { color: $warning; }
    """

    def __init__(self, label: str, ctl: PodController) -> None:
        super().__init__()
        self.label, self.ctl = label, ctl

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(f"[b]probe advice[/b] · {escape(self.label)}\n")
            try:
                yield Static(escape(self.ctl.advice()), id="advice")
            except NoWarmups as e:
                yield Static(escape(str(e)), id="advice-none")
            except RestartFailed as e:
                yield Static(escape(e.message), id="advice-none")
            yield Static("\n[b]esc[/b] close")
