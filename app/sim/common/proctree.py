"""The simulated servers' titled children, and the demo's servers' tie to sgwatch.

A real server starts processes titled with setproctitle (SGLang's
`sglang::scheduler_TP0`, vLLM's `VLLM::EngineCore`). Here each child is a tiny
Python with that title as its argv[0] and its /proc/PID/comm (the kernel keeps 15
characters), killed by the kernel when the server dies (PR_SET_PDEATHSIG, kept across
exec), so a server SIGKILLed alone leaves no child behind.

The demo's servers die with sgwatch in turn (`outlive_no_owner`): the one it launches
and every one a restart from the flag panel launches, whose parent is the restart
program that exits at once, so a parent-death signal cannot serve them.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import shutil
import signal
import sys
import threading
from pathlib import Path

_PR_SET_PDEATHSIG = 1
OWNER = "SGWATCH_SIM_OWNER"  # "PID:START_TIME:FOLDER": the demo's sgwatch and its folder
DEMO_PREFIX = "sgwatch-demo-"  # the only folders a dead owner's server removes
_CHILD = "import signal;open('/proc/self/comm','w').write({!r});signal.pause()"


def spawn_titled(names: list[str]) -> list[int]:
    """Start a titled child per name; their pids."""
    parent = os.getpid()
    pids = []
    for title in names:
        pid = os.fork()
        if pid == 0:
            _become(title, parent)
        pids.append(pid)
    return pids


def die_with(parent: int) -> bool:
    """In a child: SIGKILL from the kernel when `parent` dies, even by SIGKILL (SIGTERM
    would let a serving simulator drain forever). False when `parent` died before the
    signal was armed. Linux only; elsewhere a no-op."""
    _parent_death_signal(signal.SIGKILL)
    return os.getppid() == parent


def _parent_death_signal(sig: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)


def owner(pid: int, folder: Path) -> str:
    """The OWNER value naming process `pid` (by its start time too: pids are recycled)."""
    return f"{pid}:{start_time(pid)}:{folder}"


def outlive_no_owner() -> None:
    """When OWNER is set (in the demo's environment, inherited by every server a restart
    launches from it), a thread waits for that process's end (pidfd: no polling) and
    then removes its folder and SIGKILLs this server: sgwatch SIGKILLed cannot clean up,
    and its server must neither linger nor leave the folder behind. Its titled children
    follow it (PR_SET_PDEATHSIG). The demo also arms its first server with die_with, for
    the ~0.3 s of imports before this runs; the thread, once started, takes over (the
    kernel's SIGKILL would leave the folder)."""
    value = os.environ.get(OWNER)
    if not value:
        return
    pid, start, folder = value.split(":", 2)
    try:
        fd = os.pidfd_open(int(pid))
    except ProcessLookupError:  # gone already
        fd = None
    except (AttributeError, OSError):  # no pidfd (not Linux 5.3+): no watch, as die_with
        return
    if fd is not None and str(start_time(int(pid))) != start:  # recycled: ours is gone
        os.close(fd)
        fd = None
    threading.Thread(target=_die_after, args=(fd, Path(folder)), daemon=True).start()
    _parent_death_signal(0)


def _die_after(fd: int | None, folder: Path) -> None:
    if fd is not None:
        select.select([fd], [], [])  # readable once the process has exited
    if folder.name.startswith(DEMO_PREFIX):
        shutil.rmtree(folder, ignore_errors=True)
    os.kill(os.getpid(), signal.SIGKILL)


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks (/proc/PID/stat field 22); None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _become(title: str, parent: int) -> None:
    """In the forked child: die with the parent, then exec the titled sleeper."""
    try:
        if die_with(parent):
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # the server's log is the server's to write
                os.dup2(null, fd)
            code = _CHILD.format(title[:15])
            os.execv(sys.executable, [title, "-S", "-I", "-c", code])
    finally:
        os._exit(0)
