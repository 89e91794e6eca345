"""Follow a log file on the host: every byte once, in order, across reconnects.

    follower = LogFollower(link, "/srv/qwen/server.log")
    async for ev in follower.events():
        LogOpened   (ev.new_run: the file was replaced or truncated; start a new parse)
        LogTail     (a long log's last bytes, before its content is read from the start)
        LogData     (bytes to feed the line splitter; ev.offset = bytes consumed so far)
        LogHole     (the log's first ev.offset bytes are NUL, not sent: a copytruncate
                     under a writer that does not append)
        LogMissing  (no such file yet, or not readable: say so and keep waiting)
        LogDetached (the file was deleted or moved away while followed; its server
                     still writes to it, and it is still read until a new file comes)
        LogNote     (how the log is read, worth a line: a tmux pane polled, and why)
        LinkDown / LinkUp (mark the data STALE while down; it resumes by itself)
        LogFailed   (the follower could not run on the host; the last event)

The host side is host/follow.py. After a drop the follower starts again at the
byte offset already consumed, naming the file by dev:inode and the hash of its
first bytes, so a file replaced or truncated meanwhile is read from its start
as a new run instead of being resumed at a wrong offset.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import AsyncIterator
from dataclasses import dataclass

from sgwatch.remote.host.follow import HEAD
from sgwatch.remote.hostprogram import program
from sgwatch.transport.base import Stream
from sgwatch.transport.link import Link, LinkDown, LinkUp

_HEADER = 5


@dataclass(frozen=True, slots=True)
class LogOpened:
    reason: str  # start | resume | replaced | truncated
    offset: int
    size: int

    @property
    def new_run(self) -> bool:
        return self.reason in ("replaced", "truncated")


@dataclass(frozen=True, slots=True)
class LogData:
    data: bytes
    offset: int  # file offset after this chunk


@dataclass(frozen=True, slots=True)
class LogHole:
    offset: int  # where the content starts: the bytes before are NUL, counted as read


@dataclass(frozen=True, slots=True)
class LogTail:
    data: bytes
    start: int  # the file offset of its first byte: a line start
    end: int  # the file's size when it was opened; LogData up to here is its past


@dataclass(frozen=True, slots=True)
class LogMissing:
    error: str


@dataclass(frozen=True, slots=True)
class LogDetached:
    why: str  # deleted | moved


@dataclass(frozen=True, slots=True)
class LogNote:
    message: str


@dataclass(frozen=True, slots=True)
class LogFailed:
    message: str


LogEvent = (
    LogOpened
    | LogTail
    | LogData
    | LogHole
    | LogMissing
    | LogDetached
    | LogNote
    | LogFailed
    | LinkDown
    | LinkUp
)


def follow_command(
    path: str,
    offset: int = 0,
    ident: str | None = None,
    head: bytes = b"",
    python: str = "",
    pid: int | None = None,
) -> str:
    """sh: run host/follow.py with the first Python found (the server's own, if known).
    `pid`: the server writing the log, whose stdout is read if the name is gone."""
    request = {
        "path": path,
        "offset": offset,
        "ident": ident,
        "head_len": len(head),
        "head_sha": hashlib.sha256(head).hexdigest() if head else None,
        "writer": f"/proc/{pid}/fd/1" if pid else None,
    }
    return python_command(python, program("sgwatch.remote.host.follow", request))


def python_command(python: str, source: str) -> str:
    """sh: run a host program (`python -c SOURCE`) with the first Python found."""
    pythons = " ".join(shlex.quote(p) for p in (python, "python3") if p)
    return (
        f"for py in {pythons}; do\n"
        f'  command -v "$py" >/dev/null 2>&1 && exec "$py" -c {shlex.quote(source)}\n'
        "done\n"
        "echo 'no python3 on this host (needed to follow the log)' >&2; exit 127"
    )


class LogFollower:
    def __init__(self, link: Link, path: str, python: str = "", pid: int | None = None) -> None:
        self.link = link
        self.path = path
        self.python = python  # e.g. the server's interpreter, from discovery
        self.pid = pid  # the server writing it, when discovery found it
        self.offset = 0
        self.ident: str | None = None
        self._head = bytearray()  # the file's first bytes, to recognise it on resume

    def events(self) -> AsyncIterator[LogEvent]:
        """Use with `contextlib.aclosing` (or run to the end) so the remote side stops."""
        return self.link.follow(self._command, self._decode)

    def _command(self) -> str:
        head = bytes(self._head)
        return follow_command(self.path, self.offset, self.ident, head, self.python, self.pid)

    async def _decode(self, stream: Stream) -> AsyncIterator[LogEvent]:
        buf = bytearray()
        async for chunk in stream:
            buf += chunk
            start = 0
            while len(buf) - start >= _HEADER:
                n = int.from_bytes(buf[start + 1 : start + _HEADER], "big")
                end = start + _HEADER + n
                if len(buf) < end:
                    break
                with memoryview(buf) as view:  # one copy of the payload, not two
                    kind, payload = buf[start], bytes(view[start + _HEADER : end])
                start = end
                if kind == 0x44:  # "D"
                    self.offset += n
                    if len(self._head) < HEAD:
                        self._head += payload[: HEAD - len(self._head)]
                    yield LogData(payload, self.offset)
                elif kind == 0x54:  # "T"
                    at = int.from_bytes(payload[:8], "big")
                    yield LogTail(payload[8:], at, at + n - 8)
                else:
                    yield self._event(json.loads(payload))
            del buf[:start]
        msg = stream.stderr.splitlines()[-1:] or [f"exit status {stream.exit_status}"]
        yield LogFailed(f"cannot follow {self.path}: {msg[0]}")

    def _event(self, e: dict) -> LogEvent:
        if e["kind"] == "missing":
            return LogMissing(e["error"])
        if e["kind"] == "detached":
            return LogDetached(e["why"])
        if e["kind"] == "note":
            return LogNote(e["message"])
        if e["kind"] == "hole":  # right after an open at 0: the head is those NUL bytes
            self.offset = e["offset"]
            self._head[:] = bytes(min(self.offset, HEAD))
            return LogHole(self.offset)
        self.offset, self.ident = e["offset"], e["ident"]
        if self.offset == 0:
            self._head.clear()
        return LogOpened(e["reason"], e["offset"], e["size"])
