"""Runs on the host (sent as `python3 -c`, stdlib only, Python >= 3.8): follow one log.

    REQUEST = {"path", "offset", "ident", "head_len", "head_sha", "writer"}
    (ident, head_sha, writer: null when not known)

Why not `tail -F`: tail reports truncation and replacement on stderr, and sshd
forwards stdout and stderr separately, so the client cannot tell which bytes
came before the notice and which after: a resumed byte offset would silently
point into the wrong file. Here one writer frames everything on stdout, in order:

    b"D" + u32 length + bytes      file content, continuing at the current offset
    b"T" + u32 length + u64 + bytes   the file's last bytes, from that offset (a line
                                   start) to its size when opened: sent before the
                                   content when a long file is read from its start,
                                   so a screen shows the present before the past
    b"E" + u32 length + JSON       {"kind": "open", "reason", "ident", "offset", "size"}
                                   {"kind": "hole", "offset"}
                                   {"kind": "missing", "error"}
                                   {"kind": "detached", "why": "deleted" | "moved"}

reason: "start" (offset 0), "resume" (offset still names the same file: same
dev:inode ident, at least offset bytes, same first head_len bytes), "replaced"
(another file at PATH, or the resume check failed), "truncated" (shorter than
what was read, or its first bytes changed). The last two mean a new run.

A log copied and truncated (logrotate's copytruncate) under a writer that does not
append (a shell's `> server.log`) is written on at the writer's old offset: the file
starts with a hole as long as the log was, read as NUL bytes. Those are not sent: a
file read from its start skips the hole (SEEK_DATA) and the NUL bytes after it, and
says where its content starts ("hole", before any content; the client counts the
skipped bytes as read, NUL bytes).

A log deleted (or moved away) while followed is still written by its server:
its open descriptor is read on ("detached", polled, since inotify on the folder
no longer hears of it) until another file appears at PATH. After a reconnect the
name is gone, so writer (the server's /proc/PID/fd/1, when discovery knows the
pid) is opened instead, if it is still the same file (ident), and resumed.

Wakes on inotify (through ctypes: no module needed) for the file's directory,
so appends arrive in about a millisecond; polls every 0.25 s where inotify is
unavailable (NFS, exhausted watches). Runs under the client's stdin watchdog,
and exits on EPIPE when the client is gone.
"""

import ctypes
import errno
import hashlib
import os
import select
import struct
import sys

from sgwatch.remote.host.frames import emit, event

REQUEST = None  # filled when sent (remote/hostprogram.py)

HEAD = 1024  # bytes of the file's start remembered to recognise it
TAIL = 1 << 18  # a file read from its start sends its last bytes first when longer
BLOCK = 1 << 20
SAFETY_WAKE = 2.0  # seconds: re-check even without an event (missed or coalesced)
POLL = 0.25
# IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
#   | IN_DELETE_SELF | IN_MOVE_SELF
MASK = 0x2 | 0x4 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800


class Notify:
    """inotify on the directory, filtered to events about the file's name."""

    def __init__(self, path):
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        folder = os.path.dirname(path) or "."
        if libc.inotify_add_watch(self.fd, folder.encode(), MASK) < 0:
            os.close(self.fd)
            raise OSError(ctypes.get_errno(), "inotify_add_watch")
        self.name = os.path.basename(path).encode()

    def wait(self, timeout):
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return
        try:
            buf = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return
        i = 0
        while i + 16 <= len(buf):
            length = struct.unpack_from("iIII", buf, i)[3]
            name = buf[i + 16 : i + 16 + length].rstrip(b"\0")
            i += 16 + length
            if not name or name == self.name:
                return


class Follower:
    def __init__(self, path, offset, ident, head_len, head_sha, writer_fd="-"):
        self.path = path
        self.resume = (offset, ident, head_len, head_sha)
        self.writer_fd = writer_fd
        self.detached = False  # following a file no longer at PATH
        self.fd = None
        self.pos = 0
        self.head = b""
        self.ident = None
        self.reopen_reason = "start"
        self.missing = None

    def step(self):
        if self.fd is None and not self.open():
            return
        try:
            st = os.stat(self.path)
        except OSError:
            st = None
        cur = os.fstat(self.fd)
        if st is None and not self.detached:  # deleted or moved: its server writes on
            self.detached = True
            event(kind="detached", why="deleted" if cur.st_nlink == 0 else "moved")
        if st is not None and (st.st_dev, st.st_ino) != (cur.st_dev, cur.st_ino):
            self.drain()  # what the old file still held belongs to the old run
            os.close(self.fd)
            self.fd = None
            self.detached = False
            self.reopen_reason = "replaced"
            self.step()
            return
        if self.truncated():
            self.rewind()
        self.drain()

    def truncated(self):
        """Shorter than what was read, or its first bytes changed: a new run from 0."""
        head = self.head and os.pread(self.fd, len(self.head), 0)
        return os.fstat(self.fd).st_size < self.pos or head != self.head

    def rewind(self):
        self.pos, self.head = 0, b""
        os.lseek(self.fd, 0, os.SEEK_SET)
        self.announce("truncated", os.fstat(self.fd).st_size)

    def open(self):
        try:
            self.fd = os.open(self.path, os.O_RDONLY)
        except OSError as e:
            if self.resume is not None and self.open_writer():
                return True
            if self.missing != e.strerror:
                self.missing = e.strerror
                event(kind="missing", error=e.strerror)
            return False
        self.missing = None
        st = os.fstat(self.fd)
        self.ident = f"{st.st_dev}:{st.st_ino}"
        reason, self.pos = self.reopen_reason, 0
        if self.resume is not None:
            offset, ident, head_len, head_sha = self.resume
            self.resume = None
            if offset > 0:
                reason = "replaced"
                head = os.pread(self.fd, head_len, 0)
                if (
                    ident in ("-", self.ident)
                    and st.st_size >= offset
                    and (head_sha == "-" or hashlib.sha256(head).hexdigest() == head_sha)
                ):
                    reason, self.pos = "resume", offset
        self.head = os.pread(self.fd, min(self.pos, HEAD), 0)
        os.lseek(self.fd, self.pos, os.SEEK_SET)
        self.announce(reason, st.st_size)
        return True

    def open_writer(self):
        """On resume with PATH gone: the server's own descriptor, if it is the same file."""
        ident = self.resume[1]
        try:
            fd = os.open(self.writer_fd, os.O_RDONLY)
        except OSError:
            return False
        st = os.fstat(fd)
        if f"{st.st_dev}:{st.st_ino}" != ident:
            os.close(fd)
            return False
        offset = self.resume[0]
        self.fd, self.ident, self.pos, self.resume = fd, ident, offset, None
        self.head = os.pread(fd, min(offset, HEAD), 0)
        os.lseek(fd, offset, os.SEEK_SET)
        self.announce("resume", st.st_size)
        self.detached = True
        event(kind="detached", why="deleted" if st.st_nlink == 0 else "moved")
        return True

    def announce(self, reason, size):
        event(kind="open", reason=reason, ident=self.ident, offset=self.pos, size=size)
        if self.pos == 0:
            self.skip_hole()
            if size - self.pos > 2 * TAIL:
                self.tail(size)

    def skip_hole(self):
        """At the file's start: past a hole and the NUL bytes after it (a copytruncate
        under a writer that does not append), the client told where the content starts."""
        try:
            at = os.lseek(self.fd, 0, os.SEEK_DATA)
        except OSError as e:  # ENXIO: a hole up to the end; else no SEEK_DATA here
            at = os.fstat(self.fd).st_size if e.errno == errno.ENXIO else 0
        if at > 0:
            first = os.pread(self.fd, BLOCK, at)
            at += len(first) - len(first.lstrip(b"\0"))  # the writer's block before its offset
            self.pos, self.head = at, b"\0" * min(at, HEAD)
            event(kind="hole", offset=at)
        os.lseek(self.fd, self.pos, os.SEEK_SET)

    def tail(self, size):
        data = os.pread(self.fd, TAIL, size - TAIL)
        cut = data.find(b"\n") + 1  # from a line start: half a line would misparse
        emit(b"T", struct.pack(">Q", size - TAIL + cut) + data[cut:])

    def drain(self):
        if self.pos == 0:  # opened empty: a writer that does not append may write on since
            self.skip_hole()
        while True:
            data = os.read(self.fd, BLOCK)
            if not data:
                return
            if self.truncated():
                # Truncated and written past this offset again since the last check (a
                # copytruncate, then a fast writer): bytes the new file holds here are
                # its own, read again from its start; others were the old run's last.
                if os.pread(self.fd, len(data), self.pos) != data:
                    self.send(data)
                self.rewind()
                continue
            self.send(data)

    def send(self, data):
        if len(self.head) < HEAD:
            self.head += data[: HEAD - len(self.head)]
        self.pos += len(data)
        emit(b"D", data)


def main(req):
    follower = Follower(
        os.path.expanduser(req["path"]),
        req["offset"],
        req["ident"] or "-",
        req["head_len"],
        req["head_sha"] or "-",
        req["writer"] or "-",
    )
    try:
        notify = Notify(follower.path)
    except (OSError, AttributeError):
        notify = None
    try:
        while True:
            follower.step()
            if notify is not None and not follower.detached:
                notify.wait(SAFETY_WAKE)
            else:
                select.select([], [], [], POLL)
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main(REQUEST))
