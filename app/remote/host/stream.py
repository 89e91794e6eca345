"""Runs on the host (sent as `python3 -c`, stdlib only, Python >= 3.8): follow a log
that a command prints from its start (`docker logs --follow --since T ID`,
`journalctl -u UNIT -f -o cat --no-tail --since @T`).

    REQUEST = {"offset", "ident", "head_len", "head_sha", "command": [ARG, ...]}
    (ident, head_sha: null when not known)

Frames on stdout as follow.py's ("D" bytes, "E" events). Such a command prints
the same bytes from the start each time it runs, so a resume after a drop runs it
again and skips the offset bytes already read, once the first head_len bytes are
seen to be the same (else the log is another one: "replaced", from byte 0). The
ident is the command itself: another command (another container or run) starts
from byte 0.

The command's stdout and stderr share one pipe, so their order is kept. Its
first bytes are held back until it has run for HOLD seconds and paused: a command that fails
at once (no permission, no such container) is reported as {"kind": "missing",
"error"} with its last line, not read as log; it is tried again every RETRY
seconds, as is a command that ended (a stopped container's log is complete: run
again, it only says so). Runs under the client's stdin watchdog, which ends the
command with it.
"""

import contextlib
import hashlib
import json
import os
import select
import subprocess
import time

from sgwatch.remote.host.frames import emit, event

REQUEST = None  # filled when sent (remote/hostprogram.py)

HEAD = 1024  # bytes of the log's start remembered to recognise it
HOLD = 0.5
QUIET = 0.2  # seconds without output that end the past
PAST = 1 << 23
RETRY = 2.0
BLOCK = 1 << 16


class Position:
    """Where the log is read to (`offset`, the same in every run of the command) and
    its first bytes as read before, to check each run prints the same log."""

    def __init__(self, offset, head_len, sha):
        self.offset, self.head_len, self.sha = offset, head_len, sha

    def run(self):
        """A new run of the command: its bytes are counted again from 0."""
        self.seen, self.head = 0, b""

    def take(self, data):
        """The part of `data` not read before; raises ValueError when the run's first
        bytes differ from those read before (another log)."""
        start = self.seen
        self.seen += len(data)
        if len(self.head) < HEAD:
            self.head += data[: HEAD - len(self.head)]
            if self.head_len and len(self.head) >= self.head_len:
                if hashlib.sha256(self.head[: self.head_len]).hexdigest() != self.sha:
                    raise ValueError("another log")
                self.head_len = 0  # checked
        new = data[max(0, self.offset - start) :]
        self.offset += len(new)
        return new

    def remember(self):
        """After a run: the next one must start with the same bytes."""
        if self.head:
            self.head_len, self.sha = len(self.head), hashlib.sha256(self.head).hexdigest()


def run_once(command, position, state):
    """Run the command once and send what it prints that was not read before. Returns
    the command's last line when it failed within HOLD seconds, else None."""
    proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        return stream(proc, position, state)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def stream(proc, position, state):
    position.run()
    fd = proc.stdout.fileno()
    held, ended = b"", False
    deadline = time.monotonic() + HOLD
    while not ended and select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
        chunk = os.read(fd, BLOCK)
        held += chunk
        ended = chunk == b""
    # The past comes at once, then the command waits for more: what came before it
    # paused (up to PAST bytes) is the log's size when opened, as a file's would be.
    while not ended and len(held) < PAST and select.select([fd], [], [], QUIET)[0]:
        chunk = os.read(fd, BLOCK)
        held += chunk
        ended = chunk == b""
    if ended and proc.wait() != 0:
        lines = held.decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else f"{proc.args[0]} exited with status {proc.returncode}"
    if not state["opened"]:
        state["opened"] = True
        reason = "resume" if position.offset else "start"
        size = max(position.offset, len(held))
        event(kind="open", reason=reason, ident=state["ident"], offset=position.offset, size=size)
    chunk = held
    while True:
        new = position.take(chunk)
        if new:
            emit(b"D", new)
        if ended:
            break
        chunk = os.read(fd, BLOCK)
        ended = chunk == b""
    position.remember()
    return None


def main(req):
    command = req["command"]
    offset, head_len = req["offset"], req["head_len"]
    me = json.dumps(command)
    if req["ident"] != me:
        offset, head_len = 0, 0
    state = {"opened": False, "ident": me}
    position = Position(offset, head_len, req["head_sha"])
    while True:
        try:
            error = run_once(command, position, state)
        except ValueError:
            event(kind="open", reason="replaced", ident=me, offset=0, size=0)
            position = Position(0, 0, "")
            continue
        except FileNotFoundError:
            error = f"no {command[0]} command on this host"
        if error and not state["opened"]:
            event(kind="missing", error=error)
        time.sleep(RETRY)


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        main(REQUEST)
