"""A followed log's backlog: the bytes already in it when it was opened.

The whole protocol for reading it is here:

1. Tail first. For a long log the host sends its last bytes before anything else
   (LogTail); the Watch shows them, lines and state, at once (`Watch.preview`).
2. The past. Then the log comes from its start up to where the tail ended: it is
   read for the state only (its lines are not news), a slice at a time with the
   event loop run between slices, so keys are answered meanwhile.
3. The past split. A past of `split_from` bytes or more, whose tail named its
   engine, is read by two processes at once (pastsplit.py): its first part by a
   worker, the rest here with a fresh ingest of that engine.
4. The join. The worker's state goes on with the rest's where that is exact
   (`LogIngest.extend`); otherwise the rest is read again after the first part
   (and the first part here too if the worker failed). The whole past's state
   then takes over from the tail's (`Watch.take_over`).
5. Caught up. Once the bytes that were in the log when it was opened are read,
   the Watch's state describes now (`Watch.caught_up`): from there on its
   transitions (phase, ready, crash) are news.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from sgwatch.engines import of_log
from sgwatch.live.ingest import LogIngest
from sgwatch.live.pastsplit import SPLIT_FROM, PastSplit, start_split
from sgwatch.live.watch import Watch
from sgwatch.remote.logfollow import LogOpened

HISTORY_SLICE = 1 << 16  # bytes of a long log's past parsed between two looks at the keys
JOINED, READ_AGAIN = "joined", "read again"  # Backlog.joined


class Backlog:
    def __init__(self, watch: Watch, split_from: int = SPLIT_FROM) -> None:
        self.watch = watch
        self.split_from = split_from
        self._size = 0  # the log's size when opened: the bytes up to it are its backlog
        self._past: LogIngest | None = None  # the past being read, after a tail
        self._at = 0  # the file offset reading starts at: after a hole (LogHole) if any
        self._read = self._end = 0  # the file offsets of the past read so far, and its end
        self._split: PastSplit | None = None
        # How the last past read in two parts was joined: JOINED, or READ_AGAIN (not
        # exact, or the worker failed: the rest, or all, read here after all).
        self.joined: str | None = None

    def opened(self, ev: LogOpened) -> None:
        """The log was opened: a new run in it starts over; its size bounds the backlog."""
        w = self.watch
        self._at = ev.offset
        if ev.new_run:
            self.close()
            w.new_file(ev.reason)
        if not w.caught_up:
            self._size = ev.size
            w.caught_up = ev.offset >= ev.size

    async def tail(self, data: bytes, end: int) -> None:
        """The log's last bytes, up to offset `end`: shown now, the past read next."""
        self.close()
        w = self.watch
        w.preview(data, end)
        self._past, self._read, self._end = LogIngest(), self._at, end
        if end - self._at < self.split_from or w.state.engine is None:
            return
        engine = of_log(w.state.engine)
        if (split := await start_split(end - self._at, engine.split_prefix)) is not None:
            self._split, self._past = split, LogIngest(engine=engine.name)

    def skip(self, offset: int) -> None:
        """The log's bytes up to `offset` are NUL, not sent (LogHole): its content starts there."""
        self._at = offset
        if not self.watch.caught_up and offset >= self._size:
            self.watch.caught_up = True

    async def feed(self, data: bytes, offset: int) -> None:
        """The log's next bytes, ending at file offset `offset`."""
        w = self.watch
        if self._past is not None:
            data = await self._feed_past(data)
        if data:
            w.feed(data)
        if not w.caught_up and offset >= self._size:
            w.caught_up = True  # after the feed: the backlog's end is the past

    def close(self) -> None:
        """Stop reading a past: its worker ends, its scratch files go."""
        if self._split is not None:
            self._split.close()
            self._split = None
        self._past = None

    async def _feed_past(self, data: bytes) -> bytes:
        """Read the past's bytes in `data`; once it is all read and joined, what follows."""
        assert self._past is not None
        past, after = data[: self._end - self._read], data[self._end - self._read :]
        here = past if self._split is None else self._split.route(past)
        if len(past) > len(here):  # read by the worker
            self._read += len(past) - len(here)
            self.watch.reading_past(self._read)
        ingest = self._past

        def read(piece: bytes) -> None:
            ingest.feed(piece)
            self._read += len(piece)
            self.watch.reading_past(self._read)

        await _in_slices(read, here)
        if self._read < self._end:
            return b""
        whole = ingest if self._split is None else await self._join(self._split, ingest)
        self.close()
        self.watch.take_over(whole)
        return after

    async def _join(self, split: PastSplit, rest: LogIngest) -> LogIngest:
        """The worker's first part followed by `rest`: joined where exact, else read again."""
        try:
            first = await split.first_part()
            self.joined = JOINED
            if first is None:  # the worker failed: read its part here
                first, self.joined = LogIngest(), READ_AGAIN
                for block in split.first_bytes():
                    await _in_slices(first.feed, block)
            if not first.extend(rest):  # not exact: read the rest again after it
                self.joined = READ_AGAIN
                for block in split.rest_bytes():
                    await _in_slices(first.feed, block)
        finally:
            self.close()
        return first


async def _in_slices(feed: Callable[[bytes], None], data: bytes) -> None:
    """Feed `data` a slice at a time, the event loop run between (keys stay live)."""
    for start in range(0, len(data), HISTORY_SLICE):
        feed(data[start : start + HISTORY_SLICE])
        await asyncio.sleep(0)
