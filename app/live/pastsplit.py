"""A long log's past read by two processes at once.

Parsing, not the link, bounds how soon a long log's whole state is known (about
10 s a GB in one process). So the past's first part goes to a worker process
(live/pastworker.py) through a scratch file as it arrives, while this process
reads the rest, from the first timestamped line after the cut, with a fresh
ingest. Joined when that is exact (LogIngest.extend: the first part ended at
rest and the rest held serving lines only, the usual long log); otherwise the
rest is read again after the first part, from its own scratch copy. The scratch
files have no name once open: nothing is left behind, whatever ends sgwatch.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import BinaryIO

from sgwatch.live.ingest import LogIngest

SPLIT_FROM = 32 << 20  # bytes of past below which one process reads it all
# The worker's share: this process also receives every byte (0.62-0.68 measured best
# on a 1 GB log over SSH, bench/first_screen.py).
FIRST_SHARE = 0.65
READ_BLOCK = 1 << 20

ROOM = 1.1  # free space the scratch files need, in pasts (both parts and a margin)

SplitPrefix = Callable[[str], tuple[str, str | None, str] | None]  # ts "": no stamp


async def start_split(end: int, split_prefix: SplitPrefix) -> PastSplit | None:
    """A split of a past of `end` bytes, its worker started; None where the scratch
    folder has no room for a copy of the past or the worker cannot start (the past is
    then read in one process, as a short one is)."""
    try:
        if shutil.disk_usage(tempfile.gettempdir()).free < ROOM * end:
            return None
        split = PastSplit(end, split_prefix)
    except OSError:
        return None
    try:
        await split.start()
    except OSError:
        split.close()
        return None
    return split


class PastSplit:
    def __init__(self, end: int, split_prefix: SplitPrefix, share: float = FIRST_SHARE) -> None:
        """`end`: the past's size; `split_prefix`: the engine's, to find a timestamped line."""
        self._target = int(end * share)
        self._split_prefix = split_prefix
        self.cut: int | None = None  # where the rest starts, once found
        self._sent = 0  # bytes of the first part written
        self._first, read_fd = _scratch()
        self._rest = tempfile.TemporaryFile()  # noqa: SIM115 - kept until closed
        self._worker: subprocess.Popen[bytes] | None = None
        self._read_fd: int | None = read_fd

    async def start(self) -> None:
        """Start the worker (its imports overlap the first part's arrival). A plain
        Popen, not asyncio's: `close` must reap it at once, whatever the event loop
        does next (a transport left to the collector after its loop closed warns)."""
        assert self._read_fd is not None
        self._worker = subprocess.Popen(
            [sys.executable, "-m", "sgwatch.live.pastworker", str(self._read_fd)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # never onto the dashboard's screen
            pass_fds=(self._read_fd,),
        )
        os.close(self._read_fd)
        self._read_fd = None

    def route(self, past: bytes) -> bytes:
        """The past's next bytes -> those this process reads (the rest's); the others go
        to the worker."""
        if self.cut is None:
            at = self._cut_in(past)
            head = past if at is None else past[:at]
            self._first.write(head)
            self._sent += len(head)
            if at is None:
                return b""
            self.cut, past = self._sent, past[at:]
            self._tell(self._sent)
        self._rest.write(past)
        return past

    async def first_part(self) -> LogIngest | None:
        """The worker's ingest of the first part, once the whole past was routed; None if
        the worker failed (the caller then reads `first_bytes`)."""
        if self.cut is None:
            self._tell(self._sent)
        worker = self._worker
        if worker is None:
            return None
        out, _ = await asyncio.to_thread(worker.communicate)
        if worker.returncode != 0:
            return None
        try:
            return pickle.loads(out)
        except Exception:  # pickle documents no closed list (EOFError, AttributeError, ...):
            return None  # any output it cannot read is a worker that failed

    def first_bytes(self) -> Iterator[bytes]:
        return _blocks(self._first)

    def rest_bytes(self) -> Iterator[bytes]:
        return _blocks(self._rest)

    def close(self) -> None:
        """End the worker if it runs (and reap it) and drop the scratch files."""
        if self._worker is not None and self._worker.returncode is None:
            self._worker.kill()
            self._worker.wait()  # SIGKILL: at once
            for pipe in (self._worker.stdin, self._worker.stdout):
                with contextlib.suppress(OSError):
                    pipe.close()
        if self._read_fd is not None:
            os.close(self._read_fd)
            self._read_fd = None
        self._first.close()
        self._rest.close()

    def _tell(self, size: int) -> None:
        if self._worker is not None and self._worker.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError, ValueError):
                self._worker.stdin.write(b"%d\n" % size)
                self._worker.stdin.flush()

    def _cut_in(self, past: bytes) -> int | None:
        """Where in `past` the first timestamped line at or after the target starts."""
        nl = past.find(b"\n", max(self._target - self._sent - 1, 0))
        while 0 <= nl < len(past) - 1:
            start, nl = nl + 1, past.find(b"\n", nl + 1)
            if nl < 0:
                return None  # that line ends in a later read: look from there
            found = self._split_prefix(past[start:nl].decode("utf-8", "replace"))
            if found is not None and found[0]:
                return start
        return None


def _scratch() -> tuple[BinaryIO, int]:
    """A file to write, a second descriptor to read it from, and no name."""
    fd, path = tempfile.mkstemp(prefix="sgwatch-past-")
    try:
        read_fd = os.open(path, os.O_RDONLY)
    finally:
        os.unlink(path)
    return os.fdopen(fd, "w+b", buffering=0), read_fd


def _blocks(f: BinaryIO) -> Iterator[bytes]:
    """A scratch file's bytes from its start (pread: the writer's offset stays)."""
    f.flush()
    at = 0
    while block := os.pread(f.fileno(), READ_BLOCK, at):
        at += len(block)
        yield block
