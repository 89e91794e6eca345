"""What the docker and systemd stand-ins share: their state folder (beside the
executable that ran, so each test's copy has its own), and the supervisor that runs
a container's or a unit's command as dockerd's shim or systemd would: in the
cgroup discovery reads from /proc/PID/cgroup (system.slice/docker-ID.scope,
system.slice/UNIT.service), its output recorded with a timestamp, as dockerd's
json-file driver (each chunk, stdout and stderr through one pipe) and journald
(each line a message, through a socket) do.

    python3 _standin.py docker|unit RECORD     the supervisor (started by launch())
"""

import contextlib
import fcntl
import json
import os
import socket
import subprocess
import sys
import threading
import time

STATE = os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), "standin-state")
# cgroup v1's systemd hierarchy, else the unified one
CGROUPS = ("/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified", "/sys/fs/cgroup")


def cgroup_root():
    for root in CGROUPS:
        if os.path.isfile(os.path.join(root, "cgroup.procs")) and os.access(root, os.W_OK):
            return root
    return None


def state(name):
    os.makedirs(STATE, exist_ok=True)
    return os.path.join(STATE, name)


def save(name, doc):
    """Replace `name` whole: a temporary file of this writer's own, so that writers at
    the same time (a pod's kubelets) each replace it with a whole document."""
    tmp = state(f"{name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.replace(tmp, state(name))


@contextlib.contextmanager
def locked(name):
    """`name` held for a read, modify and write (others wait), as the API server
    serialises the updates of one object."""
    with open(state(name + ".lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def load(name):
    try:
        with open(state(name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def append(name, entry):
    with open(state(name), "a") as f:
        f.write(json.dumps(entry) + "\n")


def entries(name, offset):
    """Whole JSON lines of `name` from byte `offset`, and the offset after them."""
    try:
        with open(state(name), "rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        return [], offset
    end = data.rfind(b"\n") + 1
    return [json.loads(line) for line in data[:end].splitlines()], offset + end


def launch(kind, record):
    """Start the supervisor for the command in `record` (a state file); returns once
    the command runs. The supervisor's own command line does not hold the command."""
    supervisor = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_standin.py")
    subprocess.Popen(
        [sys.executable, supervisor, kind, record],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while "pid" not in (load(record) or {}):
        time.sleep(0.01)


def supervise(kind, record):
    doc = load(record)
    if kind == "docker":
        read_fd, out_fd = os.pipe()
        cgroup = f"system.slice/docker-{doc['id']}.scope"
        log = f"container-{doc['id']}.log"

        def on_output(data):
            append(log, {"t": time.time(), "log": data.decode("latin-1")})
    else:
        ours, theirs = socket.socketpair()
        read_fd, out_fd = ours.detach(), theirs.detach()
        cgroup = f"system.slice/{doc['unit']}"
        pending = bytearray()

        def on_output(data):
            pending.extend(data)
            *lines, rest = bytes(pending).split(b"\n")
            pending[:] = rest
            for line in lines:
                msg = line.decode("utf-8", "surrogateescape")
                append("journal.jsonl", {"t": time.time(), "unit": doc["unit"], "msg": msg})

    path = os.path.join(cgroup_root(), cgroup)
    os.makedirs(path, exist_ok=True)
    child = os.fork()
    if child == 0:
        try:
            with open(os.path.join(path, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            os.dup2(out_fd, 1)
            os.dup2(out_fd, 2)
            os.close(read_fd)
            os.execvpe(doc["cmd"][0], doc["cmd"], {**os.environ, **doc["env"]})
        finally:
            os._exit(127)
    os.close(out_fd)
    doc = {**doc, "pid": child, "supervisor": os.getpid(), "started": time.time()}
    save(record, doc)
    while data := os.read(read_fd, 1 << 16):
        on_output(data)
    os.waitpid(child, 0)
    save(record, {**doc, "exited": time.time()})
    with contextlib.suppress(OSError):
        os.rmdir(path)


if __name__ == "__main__":
    supervise(*sys.argv[1:3])
