"""One log byte stream into one ServerState: split, detect engine, parse, reduce.

Pure (no I/O): the replay command feeds it a file's bytes, the live session
the bytes of a remote tail. Engine detection stops at the first decisive line.
A long log's past may be read in two parts at once, the later one by an ingest
of its own (`LogIngest(engine=...)`), and joined (`extend`) when that is exact.
"""

from __future__ import annotations

from collections.abc import Callable

from sgwatch.core.events import SERVING_EVENTS
from sgwatch.core.linesplit import LineSplitter
from sgwatch.core.state import ServerState
from sgwatch.engines import by_name, default, for_log_line
from sgwatch.engines.outerprefix import Unwrapper

DETECT_WITHIN = 5000  # lines; after that the engine stays unknown


class LogIngest:
    def __init__(
        self, on_lines: Callable[[list[str]], None] | None = None, engine: str | None = None
    ) -> None:
        """`engine`: the parser to use from the first line (no detection)."""
        self.state = ServerState()
        self._split = LineSplitter()
        self._unwrap = Unwrapper()  # the prefixes a log's carrier adds (docker -t, journald)
        self._parser = (by_name(engine) if engine else default()).parser()
        self._detect = engine is None
        self.on_lines = on_lines  # e.g. the log pane
        self.serving_only = True  # every event so far changed only serving counters

    def feed(self, chunk: bytes) -> None:
        self._lines(self._split.feed(chunk))

    def flush(self) -> None:
        self._lines(self._split.flush())

    def extend(self, later: LogIngest) -> bool:
        """Go on from where `later` ended, `later` having read the bytes that follow
        this ingest's from their start: exact when this one ended at a line's end with
        its parser at rest and `later` read the same engine's lines, serving lines only
        (the lines then read alike whatever came before). False, changing nothing,
        when not: the later bytes must then be fed here."""
        if not (
            later.serving_only
            and self._split.idle()
            and self._parser.at_rest()
            and type(self._parser) is type(later._parser)
        ):
            return False
        self.state.extend(later.state)
        self._split, self._parser, self._unwrap = later._split, later._parser, later._unwrap
        return True

    def _lines(self, shown: list[str]) -> None:
        state = self.state
        lines = self._unwrap.lines(shown)
        if self._detect and state.engine is None and state.lines < DETECT_WITHIN:
            for line in lines[: DETECT_WITHIN - state.lines]:
                if engine := for_log_line(line):
                    state.engine = engine
                    if engine != default().name:  # its own parser from this block on
                        self._parser = by_name(engine).parser()
                    break
        state.lines += len(lines)
        for event in self._parser.parse_lines(lines):
            if not isinstance(event, SERVING_EVENTS):
                self.serving_only = False
            state.apply(event)
        if self.on_lines is not None:
            self.on_lines(shown)
