"""`?`: every key and what it does."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 64; height: auto; border: round $accent;
                            background: $surface; padding: 1 2; }
    """

    def __init__(self, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self._keys = keys

    def compose(self) -> ComposeResult:
        rows = "\n".join(f"[b]{key:>10}[/b]  {what}" for key, what in self._keys)
        with Vertical():
            yield Static("[b]sgwatch keys[/b]\n")
            yield Static(rows)
            yield Static("\nAll actions are also in the command palette (ctrl+p).")
