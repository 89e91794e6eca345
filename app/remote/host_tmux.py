"""Runs on the host (sent as `python3 -c`, stdlib only, Python >= 3.8): print a tmux
pane's lines, its history first, then each line as it completes, by polling the pane
(the pane is only read: nothing is typed into it or piped from it).

    python3 -c SRC SOCKET|- PANE

Each poll is one tmux command: the pane's cursor column (0: the last line ended with
a newline; else that line is still being written, as a progress bar is, and waits)
and `capture-pane -p -J -S -` (history and screen, wrapped lines joined, no escape
sequences). A new capture is aligned with the lines already printed by the last
ones printed, so lines scrolled out of the pane's history-limit are neither printed
again nor made up. Exits with tmux's message when the pane is gone.
"""

import subprocess
import sys
import time

POLL = 0.3
TAIL = 3  # lines printed last, found again in the next capture


def capture(socket_path, pane):
    tmux = ["tmux"] + (["-S", socket_path] if socket_path != "-" else [])
    cursor = ["display-message", "-p", "-t", pane, "#{cursor_x}"]
    r = subprocess.run(
        [*tmux, *cursor, ";", "capture-pane", "-p", "-J", "-S", "-", "-t", pane],
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    if r.returncode != 0:
        sys.stderr.write(r.stderr.decode("utf-8", "replace"))
        sys.exit(1)
    cursor, _, text = r.stdout.partition(b"\n")
    lines = text.split(b"\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return lines if cursor.strip() == b"0" else lines[:-1]


def new_lines(lines, tail, count):
    """The lines of a capture after those printed: `count` printed so far, the last of
    them `tail`."""
    if not tail:
        return lines
    at = min(count, len(lines))
    if lines[at - len(tail) : at] == tail:
        return lines[at:]
    for end in range(len(lines), len(tail) - 1, -1):  # history scrolled: find the tail
        if lines[end - len(tail) : end] == tail:
            return lines[end:]
    return []  # the tail is gone too: wait for a capture that shows it


def main():
    socket_path, pane = sys.argv[1:3]
    tail, count = [], 0
    while True:
        lines = capture(socket_path, pane)
        new = new_lines(lines, tail, count)
        if new:
            sys.stdout.buffer.write(b"\n".join(new) + b"\n")
            sys.stdout.flush()
            tail = (tail + new)[-TAIL:]
        count = len(lines)
        time.sleep(POLL)


if __name__ == "__main__":
    main()
