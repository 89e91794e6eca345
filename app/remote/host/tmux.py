"""Runs on the host (sent as `python3 -c`, stdlib only, Python >= 3.8): a tmux pane's
output, its history first, framed on stdout as follow.py's ("D" bytes, "E" events).

    REQUEST = {"socket": PATH or null, "pane", "offset", "sent": {"count", "begun", "tail"},
               "trim": BYTES (optional)}

History comes from `capture-pane -p -J -S -` (the text as shown, wrapped lines joined);
live output from `pipe-pane` into a private file (a 0700 directory from mkdtemp, the
file 0600), read as it grows. The pipe is opened in the same tmux invocation as the
capture, and tmux handles no pane output between the commands of one invocation, so
the pipe starts exactly where the capture ends: the line at the cursor is sent up to
the cursor and the pipe's raw bytes continue it (tqdm's `\\r` frames, escapes: the
client's line splitter reads them as it reads a file's). The user's pane is left as it
was: a pipe only copies what the pane shows.

The pipe is opened only when the pane has none, checked in that same invocation
(`if-shell -F '#{pane_pipe}'`; `pipe-pane -o` alone would toggle a user's pipe off): a
pane the user already pipes keeps its pipe, an {"kind": "note"} event says so, and the
pane is polled instead (a capture every POLL seconds, complete lines only), until its
pipe is gone.

Resume (after a reconnect, or when the pipe was closed by someone else): `count`
lines were sent before, ending with those whose keys are `tail` (a list), `begun`
true when a line after them was begun (Sent.request()). The new capture is aligned
on the tail (history may have scrolled past tmux's history-limit meanwhile) and
sending goes on after it: no line is lost or sent twice. A begun line is sent again
from its start after a `\\r`, read as a redrawn frame of that line. `offset` is the
bytes sent before.

The pipe's command (PIPE, run by tmux) copies into the file, and when this program is
gone, however it ended (SIGKILL too: it looks every 0.5 s), closes the pipe
(`pipe-pane` with no command) and removes the directory. This program does the same
when it ends: SIGTERM from the client's stdin watchdog, SIGHUP, EPIPE. Exits with
tmux's message when the pane is gone.

The file is trimmed as it is read: it is a run of segments, out.0, out.1, ..., each of
`trim` bytes (the REQUEST's, TRIM by default) but the last. The pipe's command makes
segment N+1 only after its last write to N, so once N+1 exists this program reads N to
its end, unlinks it and goes on in N+1: no byte is read twice or skipped. On disk there
are the bytes not yet read plus at most one segment already read. When someone else
closes the pipe, the command marks it (a file "closed", after its last write) and
leaves the segments to this program, which reads them to the end first.
"""

import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from sgwatch.remote.host.frames import emit, event

REQUEST = None  # filled when sent (remote/hostprogram.py)

POLL = 0.3  # seconds between captures of a pane the user pipes
READ = 0.05  # seconds between reads of the piped file
TAIL = 3  # lines sent last, found again in a new capture
BLOCK = 1 << 16
TRIM = 1 << 20  # bytes of a segment of the piped file (docs/RELIABILITY.md)
NAME = "#{session_name}:#{window_index}.#{pane_index}"  # as discovery labels a pane
ESCAPES = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
CONTROLS = bytes(range(32)) + b"\x7f"

# The pipe's command, from the private directory: copy the pane's output into "out";
# when the owner (this program: pid and start time) is gone, close the pipe unless it
# did (it removes the directory first), and clean up.
PIPE = r"""
import json, os, select, shutil, subprocess, sys, time
here = os.path.dirname(os.path.abspath(sys.argv[0]))
with open(os.path.join(here, "args")) as f:
    tmux, pane, owner, trim = json.load(f)
def alive():
    try:
        with open("/proc/%d/stat" % owner[0]) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return fields[0] != "Z" and fields[19] == owner[1]
    except (OSError, IndexError):
        return False
def segment(n):
    return os.path.join(here, "out.%d" % n)
n, size = 0, 0
out = os.open(segment(0), os.O_WRONLY | os.O_APPEND)
def write(data):
    global n, size, out
    while data:
        if size >= trim:  # the next segment, made only after the last write to this one
            n += 1
            new = os.open(segment(n), os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_APPEND, 0o600)
            os.close(out)
            out, size = new, 0
        done = os.write(out, data[: trim - size])
        size += done
        data = data[done:]
looked = time.monotonic()
closed = False
try:
    while True:
        if select.select([0], [], [], 0.5)[0]:
            data = os.read(0, 1 << 16)
            if not data:
                closed = True  # by the owner, by the user, or the pane ended
                break
            write(data)
        if time.monotonic() - looked < 0.5:  # a busy pane is looked after too
            continue
        looked = time.monotonic()
        if not alive():
            if os.path.isdir(here):  # the owner ended without closing the pipe
                subprocess.run([*tmux, "pipe-pane", "-t", pane], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            break
    if closed:  # the owner reads the segments to their end, then removes the directory
        os.close(os.open(os.path.join(here, "closed"), os.O_CREAT | os.O_WRONLY, 0o600))
        while os.path.isdir(here) and alive():
            time.sleep(0.5)
except OSError:
    pass  # the directory was removed by the owner, which closes the pipe
shutil.rmtree(here, ignore_errors=True)
"""


def key(line):
    """What a line shows, to compare a piped line with a captured one: its last `\\r`
    frame without escapes, controls or spaces (a terminal renders tabs as spaces)."""
    frames = [f for f in line.rstrip(b"\r\n").split(b"\r") if f.strip()]
    shown = ESCAPES.sub(b"", frames[-1] if frames else b"").translate(None, CONTROLS)
    return hashlib.sha1(b"".join(shown.split())).hexdigest()[:12]


class Sent:
    """The lines sent so far: how many ended, the keys of the last TAIL, and the line
    begun after them (its last bytes). The client keeps one too, to resume."""

    def __init__(self, count=0, begun=False, tail=()):
        self.count, self.tail, self.part = count, list(tail), b"\r" if begun else b""

    def add(self, data):
        *ended, part = (self.part + data).split(b"\n")
        self.part = part[-BLOCK:]
        if ended:
            self.count += len(ended)
            self.tail = (self.tail + [key(line) for line in ended[-TAIL:]])[-TAIL:]

    def request(self):
        """What the next program is told of the lines sent (its REQUEST's "sent")."""
        return {"count": self.count, "begun": bool(self.part), "tail": self.tail}

    def after(self, lines):
        """The index in `lines` (a capture's ended lines) of the first not sent."""
        at = min(self.count, len(lines))
        n = len(self.tail)
        if not n or [key(line) for line in lines[at - n : at]] == self.tail:
            return at
        keys = [key(line) for line in lines]
        for end in range(len(keys), n - 1, -1):  # history scrolled: find the tail
            if keys[end - n : end] == self.tail:
                return end
        return at  # not found (a line redrawn since): trust the count


class Pane:
    def __init__(self, socket_path, pane):
        self.tmux = ["tmux"] + (["-S", socket_path] if socket_path else [])
        self.pane = pane

    def run(self, *args):
        r = subprocess.run([*self.tmux, *args], stdin=subprocess.DEVNULL, capture_output=True)
        if r.returncode != 0:
            sys.stderr.write(r.stderr.decode("utf-8", "replace"))
            sys.exit(1)
        return r.stdout

    def look(self, pipe=None):
        """One tmux invocation: (ended lines, the line at the cursor up to it, whether
        the pane has a pipe not opened here); with `pipe` (a command), the pipe is
        opened first unless the pane has one."""
        mark = f"sgwatch-{os.getpid()}"
        fmt = mark + " #{cursor_x} #{cursor_y} #{pane_height} #{pane_pipe}"
        cmds = [["display-message", "-p", "-t", self.pane, fmt]]
        if pipe:
            opened = shlex.join(["pipe-pane", "-o", "-t", self.pane, pipe])
            cmds.append(["if-shell", "-F", "-t", self.pane, "#{pane_pipe}", "", opened])
        cmds += [
            ["capture-pane", "-p", "-J", "-S", "-", "-t", self.pane],
            ["display-message", "-p", "-t", self.pane, mark],
            ["capture-pane", "-p", "-N", "-t", self.pane],
        ]
        argv = [a for c in cmds for a in [";", *c]][1:]
        _, first, second = self.run(*argv).split(mark.encode())
        head, _, joined = first.partition(b"\n")
        x, y, height, piped = (int(v) for v in head.split())
        lines = joined.split(b"\n")[:-1]  # each line ends with \n
        rows = second.partition(b"\n")[2].split(b"\n")[:-1]
        below = height - 1 - y  # the screen's rows under the cursor: none of the log
        if below > 0:
            del lines[-below:]
        current, row = lines.pop() if lines else b"", rows[y] if y < len(rows) else b""
        # The cursor's line may wrap over rows above it; on its last row, cells count
        # as characters (a log's progress bars use narrow ones).
        cut = len(current.decode("utf-8", "replace")) - len(row.decode("utf-8", "replace")) + x
        begun = current.decode("utf-8", "replace")[:cut].encode()
        return lines, begun, piped == 1


def send(data, sent):
    if data:
        emit(b"D", data)
        sent.add(data)


class Piped:
    """The pane's pipe into a private file (segments), and the pipe's command that
    cleans up."""

    def __init__(self, pane, trim=TRIM):
        self.pane = pane
        self.dir = tempfile.mkdtemp(prefix="sgwatch-tmux-")  # 0700
        path = os.path.join
        with open("/proc/self/stat") as f:
            me = [os.getpid(), f.read().rsplit(")", 1)[1].split()[19]]  # pid, start time
        args = json.dumps([pane.tmux, pane.pane, me, trim])
        for name, text in (("args", args), ("pipe.py", PIPE)):
            with open(os.open(path(self.dir, name), os.O_CREAT | os.O_WRONLY, 0o600), "w") as f:
                f.write(text)
        self.n = 0
        os.close(os.open(self.segment(0), os.O_CREAT | os.O_WRONLY, 0o600))
        self.fd = os.open(self.segment(0), os.O_RDONLY)
        self.opened = False  # by look(): a pipe found there is the user's, never closed
        script = shlex.quote(path(self.dir, "pipe.py"))
        self.command = f"exec {shlex.quote(sys.executable)} {script}"

    def segment(self, n):
        return os.path.join(self.dir, f"out.{n}")

    def ours(self):
        """Whether the pipe is still this program's (its command marks it closed)."""
        return os.path.isdir(self.dir) and not os.path.exists(os.path.join(self.dir, "closed"))

    def read(self):
        data = os.read(self.fd, BLOCK)
        if data or not os.path.exists(self.segment(self.n + 1)):
            return data
        data = os.read(self.fd, BLOCK)  # written before the next segment was made
        if data:
            return data
        try:
            fd = os.open(self.segment(self.n + 1), os.O_RDONLY)
        except FileNotFoundError:  # the directory is gone
            return b""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.segment(self.n))  # read to its end: trimmed
        os.close(self.fd)
        self.fd, self.n = fd, self.n + 1
        return os.read(self.fd, BLOCK)

    def close(self):
        ours = self.opened and self.ours()  # the pane may be gone: nothing to close then
        shutil.rmtree(self.dir, ignore_errors=True)  # first: the command then just ends
        if ours:
            subprocess.run(
                [*self.pane.tmux, "pipe-pane", "-t", self.pane.pane],
                stdin=subprocess.DEVNULL,
                capture_output=True,
            )
        os.close(self.fd)


def follow(pane, sent, state, trim):
    """Send the pane's output through a pipe until the pipe is closed by someone else
    (then poll: that was the user's choice); when the pane has a user's pipe, poll it
    until that pipe is gone."""
    if state["yielded"]:
        return poll(pane, sent, state, pane.look()[0])
    piped = Piped(pane, trim)
    state["piped"] = piped
    try:
        lines, begun, users = pane.look(piped.command)
        if users:
            piped.close()
            state["piped"] = None
            return poll(pane, sent, state, lines)
        piped.opened = True
        send(opened(state, sent, lines, begun), sent)
        while True:
            data = piped.read()
            if data:
                send(data, sent)
            elif not piped.ours():
                while True:  # what the pipe wrote before it closed
                    data = piped.read()
                    if not data:
                        state["yielded"] = True
                        return None
                    send(data, sent)
            else:
                time.sleep(READ)
    finally:
        if state["piped"] is piped:
            state["piped"] = None
            piped.close()


def poll(pane, sent, state, lines):
    if not state["polling"]:
        state["polling"] = True
        name = pane.run("display-message", "-p", "-t", pane.pane, NAME).decode().strip()
        if state["yielded"]:
            why = f"tmux {name}: sgwatch's pipe-pane was closed there"
        else:
            why = f"tmux {name} already has a pipe-pane (left as it is)"
        how = f"polled every {POLL:g} s instead, lines shown once they end"
        event(kind="note", message=f"{why}: {how}")
    send(opened(state, sent, lines), sent)
    while True:
        time.sleep(POLL)
        lines, _, users = pane.look()
        if not users and not state["yielded"]:
            state["polling"] = False
            return None
        send(catch_up(sent, lines), sent)


def catch_up(sent, lines, begun=b""):
    """The bytes that follow what was sent, from a capture's lines and begun line."""
    new = b"".join(line + b"\n" for line in lines[sent.after(lines) :]) + begun
    return b"\r" + new if new and sent.part else new


def opened(state, sent, lines, begun=b""):
    """The first capture's bytes to send, after the "open" event that says how many
    are the past (as a file's size when opened)."""
    data = catch_up(sent, lines, begun)
    if not state["opened"]:
        state["opened"] = True
        offset = state["offset"]
        reason = "resume" if offset else "start"
        event(kind="open", reason=reason, ident="tmux", offset=offset, size=offset + len(data))
    return data


def main(req):
    sent = Sent(req["sent"]["count"], req["sent"]["begun"], req["sent"]["tail"])
    state = {"opened": False, "polling": False, "yielded": False, "piped": None}
    state["offset"] = req["offset"]
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(0))
    pane = Pane(req["socket"], req["pane"])
    try:
        while True:
            follow(pane, sent, state, req.get("trim", TRIM))
    finally:
        if state["piped"] is not None:
            state["piped"].close()


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        main(REQUEST)
