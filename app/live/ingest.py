"""One log byte stream into one ServerState: split, detect engine, parse, reduce.

Pure (no I/O): the replay command feeds it a file's bytes, the live session
the bytes of a remote tail. Engine detection stops at the first decisive line.
"""

from __future__ import annotations

from collections.abc import Callable

from sgwatch.core.linesplit import LineSplitter
from sgwatch.core.state import ServerState
from sgwatch.engines import by_name, default, for_log_line

DETECT_WITHIN = 5000  # lines; after that the engine stays unknown


class LogIngest:
    def __init__(self, on_lines: Callable[[list[str]], None] | None = None) -> None:
        self.state = ServerState()
        self._split = LineSplitter()
        self._parser = default().parser()
        self.on_lines = on_lines  # e.g. the log pane

    def feed(self, chunk: bytes) -> None:
        self._lines(self._split.feed(chunk))

    def flush(self) -> None:
        self._lines(self._split.flush())

    def _lines(self, lines: list[str]) -> None:
        state = self.state
        if state.engine is None and state.lines < DETECT_WITHIN:
            for line in lines[: DETECT_WITHIN - state.lines]:
                if engine := for_log_line(line):
                    state.engine = engine
                    if engine != default().name:  # its own parser from this block on
                        self._parser = by_name(engine).parser()
                    break
        state.lines += len(lines)
        for event in self._parser.parse_lines(lines):
            state.apply(event)
        if self.on_lines is not None:
            self.on_lines(lines)
