"""Exit within 2 s of SIGHUP (the terminal closed) or SIGTERM, whatever sgwatch was doing.

A Python signal handler runs only when the main thread next executes bytecode; a
main thread blocked in C (a futex wait while the app shuts down) never does, and
sgwatch then lived on deaf to the signal, its SSH connections and the demo's
server with it. So the handler only asks for a clean exit (`ask`, e.g. App.exit:
the terminal restored, sessions closed), and the signal's number also goes to a
wakeup pipe that a thread of our own reads: if the process still runs GRACE
seconds later, that thread calls `last` (kill what must not outlive us) and ends
the process. Its sockets close with it, so sshd ends the channels and the stdin
watchdog (transport/guard.py) ends what they ran.

A closed terminal has nothing left to restore, and Textual's exit can block on it: its
output thread dies at its first write (EIO), and a main thread writing the terminal's
last escapes into that thread's full queue waits forever (more often since tmux's
SIGCONT after the SIGHUP makes Textual start its terminal mode again). So when the
terminal has hung up, the forced exit comes after HUNG_UP_GRACE instead.

A daemon thread stops running once the interpreter shuts down, and a clean exit that
got there (the app closed, the demo stopped) could still take seconds: the teardown
collects the whole heap that gctune had frozen out of collections. So the forced exit
is a thread that is not a daemon, started when the signal comes: the shutdown waits
for it, and it ends the process as soon as the main thread is done, or at the grace.

A closed terminal signals only its session's leader: sgwatch started by a script or
a shell that ignores SIGHUP (or does not pass it on) hears nothing, and its terminal
only fails (EOF on read, EIO on write) while it lives on. So another thread waits
for the terminal's hangup (poll: POLLHUP) and sends sgwatch the SIGHUP it missed.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable

GRACE = 1.0  # seconds for the clean exit before the forced one
HUNG_UP_GRACE = 0.2  # the same once the terminal has hung up
SIGNALS = (signal.SIGHUP, signal.SIGTERM)


_last: list[Callable[[], None]] = []  # what the installed watcher calls before exiting
_terminal: list[int] = []  # a copy of the terminal's fd, when there is one


def install(ask: Callable[[], None], last: Callable[[], None] = lambda: None) -> None:
    """Call from the main thread before the app runs (again: the new callbacks count)."""
    for sig in SIGNALS:
        signal.signal(sig, lambda *_: ask())
    if _last:
        _last[0] = last
        return
    _last.append(last)
    read, write = os.pipe()
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(read,), daemon=True, name="lifeline").start()
    terminal = next((fd for fd in (0, 1, 2) if os.isatty(fd)), None)
    if terminal is not None:  # a copy: whoever closes fd 0-2 must not end the wait
        _terminal.append(os.dup(terminal))
        hangup = threading.Thread(target=_hangup, args=(_terminal[0],), daemon=True)
        hangup.start()


def _watch(read: int) -> None:
    while not (sigs := [s for s in os.read(read, 64) if s in SIGNALS]):
        pass
    grace = HUNG_UP_GRACE if _hung_up() else GRACE
    finish = threading.Thread(target=_finish, args=(sigs[0], time.monotonic() + grace))
    finish.daemon = False  # the interpreter's shutdown waits for it, and it ends that
    finish.start()


def _finish(sig: int, deadline: float) -> None:
    """End the process once the main thread is done (its clean exit complete) or at
    `deadline`, killing first what must not outlive us if the clean exit is not done."""
    main = threading.main_thread()
    while main.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    if main.is_alive():
        with contextlib.suppress(Exception):  # whatever the last act fails on, exit
            _last[0]()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a hung-up terminal: nothing to flush to
            stream.flush()
    os._exit(128 + sig)


def _hung_up() -> bool:
    if not _terminal:
        return False
    poll = select.poll()
    poll.register(_terminal[0], select.POLLHUP)
    return bool(poll.poll(0))  # POLLHUP, or POLLERR/POLLNVAL: gone as well


def _hangup(terminal: int) -> None:
    poll = select.poll()
    poll.register(terminal, select.POLLHUP)  # never POLLIN: keys are the app's to read
    poll.poll()  # returns on hangup (or POLLERR/POLLNVAL: the terminal is as gone)
    os.kill(os.getpid(), signal.SIGHUP)
