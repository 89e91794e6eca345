"""The server log: follows the tail, pauses when scrolled up, searches, filters.

tqdm redraws arrive as thousands of `\\r` frames; they are shown as one live
line under the log, and only a bar's last state is written into it.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable

from rich.highlighter import Highlighter
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from sgwatch.core.tqdm import Frame, looks_like_bar, parse_bar
from sgwatch.engines import split_prefix
from sgwatch.ui.quiet import show
from sgwatch.ui.widgets.logview import LogView

SCROLLBACK = 5000
_ERROR = re.compile(
    r"Traceback|\w*Error\b|\w*Exception\b|\bERROR\b|CRITICAL|: error: |Received sigquit|"
    r"crashed with exit code|Not enough memory|out of memory"
)
_WARNING = re.compile(r"\bWARNING\b|\bWarning\b|\w+Warning:")
LEVELS = ("all", "warnings+errors", "errors")


# Literals every match contains: testing them first is ~10x cheaper than the
# regexes, and nearly every line is plain (this runs for each line drawn or filtered).
_ERROR_HINTS = [
    "Traceback",
    "Error",
    "Exception",
    "ERROR",
    "CRITICAL",
    "error",
    "sigquit",
    "crashed",
    "memory",
]
_WARNING_HINTS = ["WARNING", "Warning"]


def level_of(line: str) -> int:
    """0 plain, 1 warning, 2 error."""
    if any(hint in line for hint in _ERROR_HINTS) and _ERROR.search(line):
        return 2
    if any(hint in line for hint in _WARNING_HINTS) and _WARNING.search(line):
        return 1
    return 0


def _same_bar(old: Frame, new: Frame) -> bool:
    """Is `new` a redraw of the bar `old` (same name, not restarted)?"""
    same_name = old.desc.split(" (")[0] == new.desc.split(" (")[0]
    return same_name and (old.n is None or new.n is None or new.n >= old.n)


def _key(frame: Frame) -> tuple[str, int | None, int | None]:
    return frame.desc, frame.n, frame.total


class LogHighlighter(Highlighter):
    def __init__(self) -> None:
        self.term = ""

    def highlight(self, text: Text) -> None:
        plain = text.plain
        level = level_of(plain)
        if level == 2:
            text.stylize("bold red")
        elif level == 1:
            text.stylize("yellow")
        elif plain.startswith("["):
            text.stylize("dim", 0, plain.find("]") + 1)
        if self.term:
            text.highlight_words([self.term], "reverse", case_sensitive=False)


class LogPane(Vertical):
    ALLOW_MAXIMIZE = True
    DEFAULT_CSS = """
    LogPane { border: round $panel; }
    LogPane > LogView { height: 1fr; }
    LogPane > #live { height: auto; max-height: 2; color: $accent; }
    LogPane > #log-status { height: 1; color: $text-muted; }
    LogPane > Input { display: none; }
    LogPane > Input.searching { display: block; }
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, **kwargs) -> None:
        super().__init__(**kwargs)
        self._lines: deque[str] = deque(maxlen=SCROLLBACK)
        self._live: tuple[str, Frame] | None = None  # the bar being drawn, under the log
        self._kept: Frame | None = None  # the last bar state written into the log
        self._level = 0
        self._rank: str | None = None
        self._hits: list[int] = []
        self._hit = -1
        self._highlighter = LogHighlighter()
        # Kept, not queried: read on every frame with news, and a query would fail
        # while the app tears down.
        self._view = LogView(self._highlighter, SCROLLBACK, clock, self._status, id="log")
        self._live_line = Static(id="live")
        self._status_line = Static(id="log-status")
        self._search = Input(placeholder="search the log (enter: find, esc: close)", id="search")

    def compose(self) -> ComposeResult:
        yield self._view
        yield self._live_line
        yield self._status_line
        yield self._search

    def on_mount(self) -> None:
        self.border_title = "Log"
        self._status()

    @property
    def log_view(self) -> LogView:
        return self._view

    def add(self, lines: list[str], dropped: int = 0, draw: bool = True) -> None:
        """Append new lines; bar frames only move the live line. `draw` False (a hidden
        tab): the lines are kept, and drawn with the next that are drawn."""
        out: list[str] = []
        if dropped:
            out.append(f"[sgwatch] {dropped} lines skipped: the log arrived faster than shown")
        for line in lines:
            if looks_like_bar(line):
                frame = parse_bar(line)
                if frame is None or not frame.desc:
                    continue  # tqdm's first frame, before the bar has a name
                if self._kept is not None and _key(self._kept) == _key(frame):
                    continue  # tqdm repeats a finished bar's last frame on close
                if self._live is not None and not _same_bar(self._live[1], frame):
                    out.append(self._live[0])  # another bar began: keep this one's last state
                self._live = (line, frame)
                continue
            if self._live is not None:
                out.append(self._live[0])  # the bar's last state stays in the log
                self._kept, self._live = self._live[1], None
            out.append(line)
        self._lines.extend(out)
        self.log_view.add_lines([line for line in out if self._visible(line)], draw)
        if draw:
            show(self._live_line, self._live[0] if self._live else "")

    # -- follow, filters, search ---------------------------------------------

    def follow(self) -> None:
        self.log_view.flush()
        self.log_view.following = True
        self.log_view.scroll_end(animate=False, immediate=True)
        self._status()

    def cycle_level(self) -> None:
        self._level = (self._level + 1) % len(LEVELS)
        self._rewrite()

    def cycle_rank(self) -> None:
        # Ranks in the scrollback, in order of appearance: read on the key press,
        # not per line as lines arrive.
        ranks = dict.fromkeys(p[1] for line in self._lines if (p := split_prefix(line)) and p[1])
        choices: list[str | None] = [None, *ranks]
        at = choices.index(self._rank) if self._rank in choices else 0
        self._rank = choices[(at + 1) % len(choices)]
        self._rewrite()

    def open_search(self) -> None:
        self._search.add_class("searching")
        # Focused now, not after the keys already waiting (as focus() would): what is
        # typed right after `/` (typed ahead, pasted) is the term, not dashboard keys.
        self.screen.set_focus(self._search)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.find(event.value)
        event.input.remove_class("searching")
        self.log_view.focus()

    def on_key(self, event) -> None:
        if event.key == "escape" and self._search.has_focus:
            self._search.remove_class("searching")
            self.log_view.focus()
            event.stop()

    def find(self, term: str) -> None:
        self.log_view.flush()
        self._highlighter.term = term
        lines = self.log_view.lines
        needle = term.lower()
        self._hits = [i for i, line in enumerate(lines) if needle and needle in line.lower()]
        self._hit = len(self._hits) - 1 if self._hits else -1
        self._jump()

    def next_hit(self, step: int) -> None:
        if self._hits:
            self._hit = (self._hit + step) % len(self._hits)
            self._jump()

    def jump_to_text(self, text: str) -> bool:
        """Scroll to the last line containing `text` (the crash line)."""
        self.log_view.flush()
        for i in range(len(self.log_view.lines) - 1, -1, -1):
            if text in self.log_view.lines[i]:
                self.log_view.scroll_to(y=self._context_above(i), animate=False)
                self._status()
                return True
        return False

    def _jump(self) -> None:
        log = self.log_view
        log.rehighlight()  # the search term changed
        if self._hit >= 0:
            log.scroll_to(y=self._context_above(self._hits[self._hit]), animate=False)
        self._status()

    def _context_above(self, index: int) -> int:
        """Scroll target that shows line `index` with a third of the view above it."""
        return max(0, index - self.log_view.size.height // 3)

    def _visible(self, line: str) -> bool:
        if self._level and level_of(line) < self._level:
            return False
        if self._rank is not None:
            p = split_prefix(line)
            return p is not None and p[1] == self._rank
        return True

    def _rewrite(self) -> None:
        log = self.log_view
        log.clear()
        log.add_lines([line for line in self._lines if self._visible(line)])
        self._status()

    def _status(self) -> None:
        """The status line: also called by the view whenever following starts or stops."""
        parts = ["following" if self.log_view.following else "paused (end: follow)"]
        parts.append(f"show {LEVELS[self._level]}")
        parts.append(f"rank {self._rank or 'all'}")
        if self._highlighter.term:
            found = f"{self._hit + 1}/{len(self._hits)}" if self._hits else "no match"
            parts.append(f"“{self._highlighter.term}” {found} (n/N)")
        show(self._status_line, "  ·  ".join(parts))
