"""One watched server log: its parsed state and the recent lines a screen shows.

The session pumps bytes in (from SSH, a local tail or a replayed file); the
dashboard reads `state` and takes the lines that arrived since its last frame.
A long log's past is read elsewhere (live/backlog.py) while its tail shows here.
Each change worth acting on (link, new run, phase, ready, crashed) is decided
here once and published to subscribers (transition.py) as it happens.
Pure: no UI and no I/O, so the headless commands and tests use it as is.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from sgwatch.core import events as ev
from sgwatch.core.gpu_history import GpuHistory
from sgwatch.core.linesplit import LineSplitter
from sgwatch.core.multinode import NodeOf
from sgwatch.core.state import ServerState
from sgwatch.live.ingest import LogIngest
from sgwatch.live.linkstate import CONNECTING, LinkState
from sgwatch.live.transition import CRASHED, LINK, NEW_RUN, NOTE, PHASE, READY, Transition

if TYPE_CHECKING:
    from sgwatch.engines import MetricsWindow

PENDING_LINES = 20_000  # lines waiting for the next frame; older ones are dropped
METRICS_HISTORY = 180  # /metrics windows kept for the chart (six minutes at 2 s)


Subscriber = Callable[[Transition], None]


class Watch:
    def __init__(self, label: str) -> None:
        self.label = label  # host alias or file name, as the user typed it
        self._link = CONNECTING
        self._subscribers: list[Subscriber] = []
        # What was last published about the run: its state object and run count
        # (a new file or a new run in the same file), phase, ready, crashed.
        self._run: tuple[ServerState | None, int] = (None, 0)
        self._phase: str | None = None
        self._ready = self._crashed = False
        self._note = ""  # one line for the user about the source (which server, why none)
        self.source = ""  # what is followed: "ct129:/srv/server.log (pid 4242)"
        self.engine_version = ""  # from discovery: the engine's version on the host
        self.node: NodeOf | None = None  # one node of a multi-node server
        self._pending: deque[str] = deque(maxlen=PENDING_LINES)
        self._dropped = 0
        self._ingest = LogIngest(on_lines=self._queue)
        # A long log's last bytes, read before its past (LogTail): the screen shows
        # them, lines and state, until the past is read up to where they end.
        self._preview: LogIngest | None = None
        self.history: tuple[int, int] | None = None  # (past bytes read, past size) meanwhile
        self.version = 0  # bumped by every feed: a screen with nothing new skips its frame
        self.gpu_version = 0  # the part of version that GPU samples bumped
        self.gpu = GpuHistory()
        self.gpu_note = ""  # why there is no GPU data ("no nvidia-smi on the host")
        self.gpu_interval_s = 0.5  # the stream's sampling period
        self._gpu_split = LineSplitter()
        # Set by the session once the bytes already in the log when it was opened
        # are read: from then on the state describes now, not the log's past.
        self._caught_up = False
        # Set by the session's choice: no running server writes the followed log, so
        # once its past is read the run is over where the log ends (ServerState.writer_gone).
        self.writer_gone = False
        self._listeners: list[Callable[[], None]] = []  # after every feed (screens, waiters)
        # The server's /metrics (--enable-metrics), polled apart from the log: the
        # latest window, and recent generation rates (seconds since the epoch, tok/s).
        self.metrics: MetricsWindow | None = None
        self.metrics_history: deque[tuple[float, float]] = deque(maxlen=METRICS_HISTORY)

    @property
    def state(self) -> ServerState:
        return (self._preview or self._ingest).state

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call `subscriber` with how things stand now (past transitions: the link, and
        once caught up the run's phase, ready, crash), then with every transition from
        now on. Returns the unsubscribe."""
        subscriber(Transition(LINK, past=True, link=self._link))
        s = self.state
        if self._caught_up and self._run[0] is s:
            subscriber(Transition(PHASE, self._phase, None, s, past=True))
            for kind, seen in ((READY, self._ready), (CRASHED, self._crashed)):
                if seen:
                    subscriber(Transition(kind, self._phase, None, s, past=True))
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return unsubscribe

    def listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` after every feed (log, GPU samples, a new file, an end): who
        draws or waits wakes on it instead of polling. Returns the unlisten."""
        self._listeners.append(listener)

        def unlisten() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unlisten

    @property
    def link(self) -> LinkState:
        return self._link

    @link.setter
    def link(self, value: LinkState) -> None:
        if value != self._link:
            self._link = value
            self._publish(Transition(LINK, link=value))

    @property
    def note(self) -> str:
        return self._note

    @note.setter
    def note(self, value: str) -> None:
        if value != self._note:
            self._note = value
            self._publish(Transition(NOTE, value))

    @property
    def caught_up(self) -> bool:
        return self._caught_up

    @caught_up.setter
    def caught_up(self, value: bool) -> None:
        """Once the log's past is read, publish how the run stands, then every change."""
        if value and not self._caught_up:
            self._caught_up = True
            if self.writer_gone and (why := self.state.writer_gone()) is not None:
                self._queue([f"[sgwatch] server gone; {why}"])
                self.note = f"server gone; {why}"
            self._judge(past=True)

    def preview(self, data: bytes, end: int) -> None:
        """The log's last bytes, up to file offset `end`, shown while its past is read."""
        self.version += 1
        self._preview = LogIngest(on_lines=self._queue)
        self._preview.feed(data)
        self.history = (0, end)
        self._changed()

    def reading_past(self, read: int) -> None:
        """`read` bytes of the past are read (progress, while the tail shows)."""
        assert self.history is not None
        self.version += 1
        self.history = (read, self.history[1])
        self._changed()

    def take_over(self, past: LogIngest) -> None:
        """The whole past, read: its state takes over from the tail's; later lines show."""
        self.version += 1
        self._ingest, self._preview, self.history = past, None, None
        past.on_lines = self._queue
        self._changed()

    def feed(self, chunk: bytes) -> None:
        self.version += 1
        self._ingest.feed(chunk)
        self._changed()

    def new_file(self, why: str) -> None:
        """The log was replaced or truncated (a restart): parse it from scratch."""
        self.version += 1
        self._ingest = LogIngest(on_lines=self._queue)
        self._preview = self.history = None
        self.writer_gone = False  # a server writes it again
        self._queue([f"[sgwatch] the log was {why}: reading the new run from its start"])
        self._changed()

    def server_gone(self, pid: int) -> None:
        """The server's process exited and its log said nothing (SIGKILL, the OOM killer):
        a crash all the same, or the screen would show a warmup that is not happening."""
        s = self.state
        if s.state in (ev.CRASHED, ev.STOPPED):
            return
        why = (
            f"the server process (pid {pid}) is gone and its log says nothing more: "
            "killed? (SIGKILL, the OOM killer: see dmesg on the host)"
        )
        s.apply(ev.Crash(ts=s.now_ts, rank=None, summary=why, line=""))
        self._queue([f"[sgwatch] {why}"])
        self.version += 1
        self._changed()

    def feed_metrics(self, window: MetricsWindow | None, at: float) -> None:
        """A /metrics window ending at `at`; None: no /metrics now (history cleared)."""
        self.version += 1
        self.metrics = window
        if window is None:
            self.metrics_history.clear()
        elif window.gen_tok_s is not None:
            self.metrics_history.append((at, window.gen_tok_s))

    def feed_server_startup(self, report: ev.ServerStartup) -> None:
        """The server's own start-up figures, as its HTTP API reported them: into the
        run's state, beside what the log says."""
        self.version += 1
        self.state.apply(report)
        self._changed()

    def feed_gpu(self, chunk: bytes) -> None:
        """Bytes of the `nvidia-smi --query-gpu=<gpu_history.QUERY> -lms N` stream."""
        self.version += 1
        self.gpu_version += 1
        for line in self._gpu_split.feed(chunk):
            self.gpu.add_line(line)
        self._changed()

    def end(self) -> None:
        """The stream ended: its unfinished last line counts too."""
        self.version += 1
        self._ingest.flush()
        self._changed()

    @property
    def fingerprint(self) -> tuple:
        """Changes whenever anything a screen shows may have changed."""
        return (self.version, self.link, self.note, self.source, self.gpu_note)

    @property
    def fingerprint_but_gpu(self) -> tuple:
        """The fingerprint without the GPU samples."""
        return (self.version - self.gpu_version, *self.fingerprint[1:])

    @property
    def lines_waiting(self) -> bool:
        """Lines have come since the last `take_lines`."""
        return bool(self._pending) or bool(self._dropped)

    def take_lines(self) -> tuple[list[str], int]:
        """Lines since the last call, and how many were dropped for falling behind."""
        lines, dropped = list(self._pending), self._dropped
        self._pending.clear()
        self._dropped = 0
        return lines, dropped

    def _changed(self) -> None:
        self._judge()
        for listener in list(self._listeners):
            listener()

    def _judge(self, past: bool = False) -> None:
        """Publish what changed in the run since the last look (nothing before caught up)."""
        if not self._caught_up:
            return
        s = self.state
        run = (s, max(s.runs, 1))  # a log's first run counts from its first line: no new run
        if run != self._run:
            if self._run[0] is not None and not past:
                self._publish(Transition(NEW_RUN, s.state, self._phase, s))
            self._run, self._phase, self._ready, self._crashed = run, None, False, False
        if s.state != self._phase:
            previous, self._phase = self._phase, s.state
            self._publish(Transition(PHASE, s.state, previous, s, past))
        if s.ready and not self._ready and s.ended is None:  # ended: a gone server's past
            self._ready = True
            self._publish(Transition(READY, s.state, None, s, past))
        if s.crash is not None and not self._crashed:
            self._crashed = True
            self._publish(Transition(CRASHED, s.state, None, s, past))

    def _publish(self, t: Transition) -> None:
        for subscriber in list(self._subscribers):
            subscriber(t)

    def _queue(self, lines: list[str]) -> None:
        overflow = len(self._pending) + len(lines) - PENDING_LINES
        if overflow > 0:
            self._dropped += overflow
        self._pending.extend(lines)
