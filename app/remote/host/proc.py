"""Facts of a host's processes from /proc, for the programs sent there (stdlib only,
Python >= 3.8, no `from __future__`): a program imports what it needs as sgwatch
would and is sent with this text in place of that import (remote/hostprogram.py)."""

import os


def started(pid):
    """The start time of a live (not zombie) pid, else None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == b"Z" else int(fields[19])


def argv_of(pid):
    """The process's argv; raises OSError when it cannot be read."""
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return [a.decode("utf-8", "replace") for a in f.read().split(b"\0")[:-1]]


def new_server(pid):
    """The answer a restart program gives for the server it started or found."""
    return {"pid": pid, "start_time": started(pid), "cwd": os.readlink(f"/proc/{pid}/cwd")}
