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
import threading
import time
from collections.abc import Callable

GRACE = 1.0  # seconds for the clean exit before the forced one
SIGNALS = (signal.SIGHUP, signal.SIGTERM)


_last: list[Callable[[], None]] = []  # what the installed watcher calls before exiting


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
        hangup = threading.Thread(target=_hangup, args=(os.dup(terminal),), daemon=True)
        hangup.start()


def _watch(read: int) -> None:
    while not (sigs := [s for s in os.read(read, 64) if s in SIGNALS]):
        pass
    time.sleep(GRACE)  # the process ends meanwhile when the clean exit works
    with contextlib.suppress(Exception):  # whatever the last act fails on, the exit must come
        _last[0]()
    os._exit(128 + sigs[0])


def _hangup(terminal: int) -> None:
    poll = select.poll()
    poll.register(terminal, select.POLLHUP)  # never POLLIN: keys are the app's to read
    poll.poll()  # returns on hangup (or POLLERR/POLLNVAL: the terminal is as gone)
    os.kill(os.getpid(), signal.SIGHUP)
