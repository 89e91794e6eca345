"""The crash banner: the one line to act on, where it died, how to see it."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from sgwatch.core.events import Remedy
from sgwatch.core.state import ServerState
from sgwatch.ui.badges import PHASE_LABELS
from sgwatch.ui.quiet import show


class CrashBanner(Static):
    DEFAULT_CSS = """
    CrashBanner { display: none; height: auto; padding: 0 1;
                  background: $error 20%; border-left: thick $error; }
    CrashBanner.crashed { display: block; }
    """

    def show(self, s: ServerState) -> None:
        crash = s.crash
        self.set_class(crash is not None, "crashed")
        if crash is None:
            return
        phase = PHASE_LABELS.get(crash.phase, crash.phase)
        code = f", exit status {crash.exit_code}" if crash.exit_code is not None else ""
        show(
            self,
            Content.assemble(
                ("✗ CRASHED", "bold $error"),
                f" during {phase}{code}: ",
                (crash.summary, "bold"),
                ("   (c: show in log)", "$text-muted"),
                *_fix(crash.remedy),
            ),
        )


def _fix(remedy: Remedy | None) -> tuple[tuple[str, str], ...]:
    """The remedy the server's message names, and the key that restarts with it."""
    if remedy is None:
        return ()
    return (
        ("\nfix: ", "bold"),
        (remedy.advice, ""),
        ("   (f, then F: restart with it)", "$text-muted"),
    )
