"""One log byte stream into one ServerState: split, detect engine, parse, reduce.

Pure (no I/O): the replay command feeds it a file's bytes, the live session
the bytes of a remote tail. Engine detection stops at the first decisive line.
"""

from __future__ import annotations

from collections.abc import Callable

from sgwatch.core.linesplit import LineSplitter
from sgwatch.core.state import ServerState
from sgwatch.engines.detect import detect_engine
from sgwatch.engines.sglang.parse import Parser

DETECT_WITHIN = 5000  # lines; after that the engine stays unknown


class LogIngest:
    def __init__(self, on_line: Callable[[str], None] | None = None) -> None:
        self.state = ServerState()
        self._split = LineSplitter()
        self._parser = Parser()
        self._on_line = on_line

    def feed(self, chunk: bytes) -> None:
        self._lines(self._split.feed(chunk))

    def flush(self) -> None:
        self._lines(self._split.flush())

    def _lines(self, lines: list[str]) -> None:
        state, parse, on_line = self.state, self._parser.parse, self._on_line
        for line in lines:
            state.lines += 1
            if state.engine is None and state.lines <= DETECT_WITHIN:
                state.engine = detect_engine(line)
            event = parse(line)
            if event is not None:
                state.apply(event)
            if on_line is not None:
                on_line(line)
