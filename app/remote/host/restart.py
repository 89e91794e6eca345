"""Runs on the host (sent over stdin to its Python; stdlib only, Python >= 3.8).

Restarts one server (steps 3-5 of the restart protocol, docs/design/architecture.md)
in one round trip, so that a link dropping halfway cannot leave the host without a
server:
  lock      one restart per user at a time (flock); a second is refused
  room      the log's filesystem must have room for the new log: on a full disk
            renaming the old one aside works but the new server's every write
            fails, so the restart is refused before anything is stopped
  identify  the pid must still be the process discovery saw (same start time):
            a recycled pid is never signalled; its cwd and environment are read
            here, so secrets never leave the host
  stop      SIGTERM, a grace period, then SIGKILL, to the server's process group
            when that group holds only the server and its children, else to
            each of them: an unrelated process is never touched
  release   wait until no stopped pid holds GPU memory (nvidia-smi compute apps)
  space     room is looked at again once the server is stopped (a disk that filled
            meanwhile, the old server's last writes among what filled it): a new
            server that could write none of its log is not launched; the stage
            says so and names where the old log is, untouched
  keep      rename the old log to LOG.YYYYmmdd-HHMMSS (never overwritten)
  launch    the new argv, detached (own session, stdin /dev/null, output to LOG, or
            through `tee -a LOG` for a server that was run into tee)
"first" launches with no server to take after (hosts.NAME.launch): the login's
environment and home directory, and LOG, when not given, new under the host's
state directory ($XDG_STATE_HOME/sgwatch/logs, default ~/.local/state).
"mode" runs all of it ("restart"), or only up to release ("stop") or only keep and
launch ("launch"): the nodes of a multi-node server all stop before any starts.
The request is the REQUEST literal below (the caller fills it in, so nothing
secret appears in a command line); the answer is one JSON object on stdout.
Under faults: the program runs only once all of it has arrived (main() is called
by its last line, so a program cut short by a dropped link does nothing), and once
it runs, nothing stops it halfway: a link that drops (or an sgwatch killed) ends
only the channel, never the program (no pty, no signal; an answer that cannot be
written is dropped), so the host ends with the old server or the new one.
"""

import errno
import fcntl
import json
import os
import signal
import subprocess
import sys
import time

REQUEST = None  # filled when sent (remote/hostprogram.py)
# Fixed, not $TMPDIR: every login of the user on this host must find the same lock.
# SGWATCH_LOCK_DIR moves it, for hosts that share one /tmp (simulated hosts on one machine).
LOCK = os.path.join(os.environ.get("SGWATCH_LOCK_DIR") or "/tmp", "sgwatch-restart-%d.lock")
ROOM = 1 << 20  # bytes free below which the new log is refused (start-ups log 10-200 KB)


class Refused(Exception):
    def __init__(self, stage, message):
        super().__init__(message)
        self.stage = stage


def stat_fields(pid):
    """(ppid, pgid, starttime, state) from /proc/PID/stat, or None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            _head, rest = f.read().rsplit(b")", 1)
    except OSError:
        return None
    fields = rest.split()
    return int(fields[1]), int(fields[2]), int(fields[19]), fields[0].decode()


def processes():
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = stat_fields(int(name))
            if fields and fields[3] != "Z":
                out[int(name)] = fields
    return out


def tree(pid, table):
    """The pid and all its descendants."""
    found, todo = {pid}, [pid]
    while todo:
        parent = todo.pop()
        for child, fields in table.items():
            if fields[0] == parent and child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pids):
    return [p for p in pids if (stat_fields(p) or (0, 0, 0, "Z"))[3] != "Z"]


def environment(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        items = f.read().split(b"\0")
    env = {}
    for item in items:
        name, eq, value = item.decode("utf-8", "surrogateescape").partition("=")
        if eq:
            env[name] = value
    return env


def identify(req):
    """The running server as discovery saw it, with its cwd and env; None if it is gone."""
    pid = req.get("pid")
    if not pid:
        return None
    fields = stat_fields(pid)
    if fields is None or fields[3] == "Z" or fields[2] != req["start_time"]:
        return None  # exited, or the pid now belongs to another process
    try:
        return {
            "pid": pid,
            "pgid": fields[1],
            "cwd": os.readlink(f"/proc/{pid}/cwd"),
            "env": environment(pid),
        }
    except OSError as e:
        raise Refused("identify", f"cannot read pid {pid}: {e.strerror}") from None


def signal_all(targets, group, sig):
    try:
        if group is not None:
            os.killpg(group, sig)
        else:
            for p in targets:
                os.kill(p, sig)
    except ProcessLookupError:
        pass
    except PermissionError as e:
        raise Refused("stop", f"not allowed to signal the server: {e.strerror}") from None


def wait_gone(pids, seconds):
    deadline = time.monotonic() + seconds
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive(pids)


def stop(server, grace):
    table = processes()
    targets = tree(server["pid"], table)
    group_members = {p for p, f in table.items() if f[1] == server["pgid"]}
    # killpg only when the group is the server's own (setsid-launched, or all of it ours)
    group = server["pgid"] if group_members <= targets else None
    signal_all(targets, group, signal.SIGTERM)
    left = wait_gone(targets, grace)
    forced = bool(left)
    if left:
        signal_all(left if group is None else targets, group, signal.SIGKILL)
        left = wait_gone(targets, 10)
    if left:
        raise Refused("stop", f"pids {sorted(left)} survived SIGKILL") from None
    return sorted(targets), forced, group is not None


def gpu_holders(pids):
    try:
        r = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=20,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    held = {int(t) for t in r.stdout.decode().split() if t.strip().isdigit()}
    return sorted(held & set(pids))


def wait_released(pids, seconds):
    deadline = time.monotonic() + seconds
    held = gpu_holders(pids)
    while held and time.monotonic() < deadline:
        time.sleep(0.5)
        held = gpu_holders(pids)
    if held:
        raise Refused(
            "release", f"GPU memory still held by pid {held} after {seconds:.0f}s; not launching"
        )


def free(log):
    """(KiB free, whether that is room enough) on the log's filesystem; None when its
    folder does not exist yet (state_log makes it; a bad one fails at launch, saying why)."""
    try:
        st = os.statvfs(os.path.dirname(log) or ".")
    except OSError:
        return None
    bytes_free = st.f_bavail * st.f_frsize
    return bytes_free // 1024, bytes_free >= ROOM and not (st.f_files and not st.f_favail)


def room(log, before):
    """Refuse, `before` stopping or starting anything, when the log's filesystem is full."""
    kib, enough = free(log) or (0, True)
    if not enough:
        raise Refused(
            "room",
            f"no room for the new log: {os.path.dirname(log) or '.'} has {kib} KiB free; "
            f"refused before {before}, the old log untouched",
        )


def space(log):
    """The same check once the server is stopped, before the old log is kept."""
    kib, enough = free(log) or (0, True)
    if not enough:
        raise Refused(
            "space",
            f"no space left on {os.path.dirname(log) or '.'} ({kib} KiB free) once the server "
            f"had stopped: the new server was not launched; the old log is untouched at {log}",
        )


def keep(log):
    """Rename the old log aside; the name is new, so nothing is overwritten. A failure
    leaves it where it was (the link is made before the old name goes)."""
    if not os.path.exists(log):
        return None
    base = "{}.{}".format(log, time.strftime("%Y%m%d-%H%M%S"))
    target, n = base, 1
    while True:
        try:
            os.link(log, target)  # fails if target exists, unlike rename
            break
        except FileExistsError:
            target, n = f"{base}-{n}", n + 1
        except OSError as e:
            raise Refused("keep", f"cannot keep the old log ({e.strerror}): still {log}") from None
    os.unlink(log)
    return target


def state_log():
    """A new log file under the host's state directory, for a first launch."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    folder = os.path.join(base, "sgwatch", "logs")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, "server-{}.log".format(time.strftime("%Y%m%d-%H%M%S")))


def launch(argv, cwd, env, log, tee=False):
    """Output to LOG, or with `tee` through `tee -a LOG` as the server was run before
    (tee in a session of its own; it ends at the server's end of output)."""
    env = dict(env)
    env.setdefault("PYTHONUNBUFFERED", "1")  # or a Python server's log stays empty
    if tee:
        reader, fd = os.pipe()
        try:
            subprocess.Popen(
                ["tee", "-a", log],
                stdin=reader,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as e:
            os.close(fd)
            raise Refused("launch", f"cannot start tee: {e.strerror}") from None
        finally:
            os.close(reader)
    else:
        try:
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as e:
            raise Refused("launch", f"cannot open the new log {log}: {e.strerror}") from None
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as e:
        raise Refused("launch", f"cannot start {argv[0]}: {e.strerror}") from None
    finally:
        os.close(fd)
    fields = stat_fields(proc.pid)
    return {"pid": proc.pid, "start_time": fields[2] if fields else None}


def lock():
    path = LOCK % os.getuid()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno in (errno.EAGAIN, errno.EACCES):
            raise Refused("lock", "another restart is in progress on this host") from None
        raise
    return fd


def restart(req):
    held = lock()
    try:
        server = identify(req)
        if server is None and req.get("pid") and req.get("require_running"):
            raise Refused(
                "identify", f"pid {req['pid']} is no longer the server that was discovered"
            )
        env = req.get("env")
        first = req.get("first")
        if first:  # nothing to take after: the login's environment, plus the command's own
            env = {**os.environ, **(env or {})}
        elif env is None:
            if server is None:
                raise Refused("identify", "the server is gone and no environment was given")
            env = server["env"]
        cwd = req.get("cwd") or (server and server["cwd"]) or (first and os.path.expanduser("~"))
        if not cwd or not os.path.isdir(cwd):
            raise Refused("identify", f"working directory {cwd!r} does not exist")
        mode = req.get("mode", "restart")
        if req["log"]:  # a stop too: the launch that follows writes there
            stopping = server is not None and mode != "launch"
            room(os.path.expanduser(req["log"]), "stopping the server" if stopping else "launching")
        out = {"stopped": [], "forced": False, "cwd": cwd}
        out["env"] = env if req.get("return_env") else None
        if server is not None and mode in ("restart", "stop"):
            out["stopped"], out["forced"], out["by_group"] = stop(server, req["grace_s"])
            wait_released(out["stopped"], req["gpu_wait_s"])
        if mode in ("restart", "launch"):
            out["log"] = os.path.expanduser(req["log"]) if req["log"] else state_log()
            if out["stopped"]:
                space(out["log"])
            else:
                room(out["log"], "launching")
            out["kept"] = keep(out["log"])
            out.update(launch(req["argv"], cwd, env, out["log"], req.get("tee")))
        return out
    finally:
        os.close(held)


def main():
    try:
        answer = restart(REQUEST)
    except Refused as e:
        answer = {"error": str(e), "stage": e.stage}
    try:
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    except OSError:
        pass  # the link dropped: the restart itself has completed


if __name__ == "__main__":
    main()
