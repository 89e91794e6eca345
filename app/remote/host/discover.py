"""Runs on the host (fed to the Python python.sh finds; stdlib only, Python >= 3.8).

Prints one JSON object: the server processes that match the request's patterns (each
engine's `python -m MODULE`, script or `PROGRAM SUBCOMMAND` launcher, sent by
the caller as data: app/engines/), and `nvidia-smi -L`. For each server: its
engine and kind, pid, pgid, start time (with the pid, its identity), user, argv,
cwd, environment with secrets masked here, before anything leaves the host,
stdin/stdout/stderr targets, where its output can be read (its log source, see
log_source), the interpreter and the engine's version as installed there. A
server's workers are not listed separately (only the topmost match counts).
"""

import json
import os
import pwd
import re
import socket
import subprocess
import sys
import time

from sgwatch.remote.host.recent import recent_logs, shell_folders

SECRET = re.compile("TOKEN|KEY|SECRET|PASSWORD", re.IGNORECASE)
MASK = "***"
VERSION = "import sys; from importlib.metadata import version; print(version(sys.argv[1]))"
# Filled when sent (remote/hostprogram.py): {"patterns": what a server looks like,
# [{"engine", "kind", "module", "script", "launcher", "version_package"}], "logs": logs
# a server wrote before (the config's, the history's), to show the last run when none
# runs now, "recent": where and how to look for the logs of servers that are gone when
# none runs (host/recent.py: its `ask`, with "places"), or null}
REQUEST = None


def matches(pattern, arg, nxt):
    if pattern["module"] and arg == "-m" and nxt == pattern["module"]:
        return True
    if pattern["script"] and arg.endswith(pattern["script"]):
        return True
    launcher = pattern["launcher"]  # [PROGRAM, SUBCOMMAND], or [PROGRAM]: a plain executable
    return bool(launcher) and os.path.basename(arg) == launcher[0] and launcher[1:] in ([], [nxt])


def server_pattern(argv):
    """The pattern of the server an argv starts, or None."""
    for i, arg in enumerate(argv):
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        for pattern in REQUEST["patterns"]:
            if matches(pattern, arg, nxt):
                return pattern
    return None


def read(path, mode="rb"):
    with open(path, mode) as f:
        return f.read()


def link(path):
    try:
        return os.readlink(path)
    except OSError:
        return None


def stat_fields(pid):
    """(ppid, pgid, starttime) from /proc/PID/stat; the name may hold spaces and ')'."""
    rest = read(f"/proc/{pid}/stat").rsplit(b")", 1)[1].split()
    return int(rest[1]), int(rest[2]), int(rest[19])


def environment(pid):
    env = {}
    for item in read(f"/proc/{pid}/environ").split(b"\0"):
        name, eq, value = item.decode("utf-8", "replace").partition("=")
        if eq:
            env[name] = value
    return env


def masked(env):
    return {k: (MASK if SECRET.search(k) else v) for k, v in env.items()}


def log_file(target):
    """A regular file a descriptor writes to (not a pipe, socket, tty or /dev/null)."""
    if not target or not target.startswith("/") or target.startswith("/dev/"):
        return None
    return target[: -len(" (deleted)")] if target.endswith(" (deleted)") else target


CONTAINER = re.compile(r"(?:docker[-/]|/docker/)([0-9a-f]{64})")
UNIT = re.compile(r"^[^:]*:[^:]*:/system\.slice/(?:.+/)?([^/]+\.service)$", re.MULTILINE)
PANES = "#{pane_tty}\t#{session_name}:#{window_index}.#{pane_index}\t#{pane_id}"
# docker ps: id, name and the compose labels that say where a changed command must go
CONTAINERS = "{{.ID}}\t{{.Names}}\t{{.Label `com.docker.compose.project.config_files`}}\t" + (
    "{{.Label `com.docker.compose.service`}}"
)
RELAUNCH = "pass --log PATH, or relaunch it with `sgwatch launch` (it logs to a file)"


class Host:
    """What every server's log source is looked up in: the process list, by group, and
    host tools, each run at most once."""

    def __init__(self, pids, groups):
        self.pids, self.groups, self.asked, self.boot = pids, groups, {}, None

    def epoch(self, start):
        """Seconds since the epoch of a process's start (clock ticks after boot)."""
        if self.boot is None:
            stat = read("/proc/stat", "r")
            self.boot = int(stat.split("\nbtime ", 1)[1].split()[0])
        return round(self.boot + start / os.sysconf("SC_CLK_TCK"), 2)

    def tool(self, argv):
        """(status, stdout, last stderr line) of a host tool; None: not installed."""
        key = tuple(argv)
        if key not in self.asked:
            try:
                r = subprocess.run(
                    argv,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=10,
                )
                err = r.stderr.decode("utf-8", "replace").strip().splitlines()
                out = r.stdout.decode("utf-8", "replace")
                self.asked[key] = (r.returncode, out, err[-1] if err else "")
            except FileNotFoundError:
                self.asked[key] = None
            except (OSError, subprocess.SubprocessError) as e:
                self.asked[key] = (1, "", str(e))
        return self.asked[key]

    def reader(self, pipe, group, writer):
        """The process whose stdin is `pipe`: a pipeline's members share the writer's
        process group, so that group is looked at before every process."""
        for pid in self.groups.get(group, []) + self.pids:
            if pid != writer and link(f"/proc/{pid}/fd/0") == pipe:
                return pid
        return None


def source(kind, label, path=None, problem=None, **detail):
    return {"kind": kind, "label": label, "path": path, "problem": problem, "detail": detail}


def written_files(pid):
    """The regular files a process has open for writing: those it opened itself (`tee
    FILE`: fd 3 on) before its stdout (`ts > FILE`); never its stderr (its own errors)."""
    out = []
    try:
        fds = sorted((int(fd) for fd in os.listdir(f"/proc/{pid}/fd")), key=lambda fd: fd < 3)
    except OSError:
        return out
    for fd in fds:
        path = log_file(link(f"/proc/{pid}/fd/{fd}"))
        if fd not in (0, 2) and path and path not in out and writing(pid, fd):
            out.append(path)
    return out


def writing(pid, fd):
    try:
        flags = read(f"/proc/{pid}/fdinfo/{fd}", "r").split("flags:", 1)[1].split()[0]
        return int(flags, 8) & 3 != 0  # O_WRONLY or O_RDWR
    except (OSError, IndexError, ValueError):
        return False


def program(pid):
    try:
        return os.path.basename(read(f"/proc/{pid}/cmdline").split(b"\0")[0].decode())
    except (OSError, UnicodeDecodeError):
        return "?"


def log_source(pid, fds, env, host, since):
    """Where the server's output can be read: a file, the file a pipe's reader writes
    (`| tee FILE`), a tmux pane, screen's log, a Docker container's or a systemd unit's
    log, from `since` (the server's start, seconds since the epoch); `problem` says why
    there is nothing to follow, and what to do instead."""
    try:
        cgroup = read(f"/proc/{pid}/cgroup", "r")
    except OSError:
        cgroup = ""
    container = CONTAINER.search(cgroup)
    if container:
        return docker_source(container.group(1), host, since)
    outputs = [t for t in fds[1:] if t]
    unit = UNIT.search(cgroup)
    if unit and any(t.startswith("socket:") for t in outputs):
        return source("journald", f"journal {unit.group(1)}", unit=unit.group(1), since=since)
    for target in outputs:
        if log_file(target):
            return source("file", log_file(target), log_file(target))
    for target in outputs:
        if target.startswith("pipe:"):
            return pipe_source(pid, target, host)
    for target in outputs:
        if target.startswith(("/dev/pts/", "/dev/tty")):
            return terminal_source(target, env, host)
    where = outputs[0] if outputs else "a closed descriptor"
    return source("none", where, problem=f"its output goes to {where}: nothing to read; {RELAUNCH}")


def pipe_source(pid, pipe, host, through=""):
    _, group, _ = stat_fields(pid)
    reader = host.reader(pipe, group, pid)
    if reader is None:
        why = f"its output goes into a pipe nothing reads; {RELAUNCH}"
        return source("pipe", "pipe", problem=why)
    name = through + program(reader)
    files = written_files(reader)
    if files:
        return source("pipe", f"{name} -> {files[0]}", files[0], reader=reader)
    onward = link(f"/proc/{reader}/fd/1") or "a closed descriptor"
    if onward.startswith("pipe:") and through.count("|") < 3:
        return pipe_source(reader, onward, host, name + " | ")
    return source(
        "pipe",
        f"{name} -> {onward}",
        problem=f"its output goes through `{name}` to {onward}, not into a file; {RELAUNCH}",
    )


def terminal_source(tty, env, host):
    socket_path = env.get("TMUX", "").split(",")[0]
    tmux = ["tmux"] + (["-S", socket_path] if socket_path else [])
    got = host.tool([*tmux, "list-panes", "-a", "-F", PANES])
    for line in (got[1] if got and got[0] == 0 else "").splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and fields[0] == tty:
            return source("tmux", f"tmux {fields[1]}", pane=fields[2], socket=socket_path)
    window = env.get("STY")
    if window:
        try:
            files = written_files(int(window.split(".")[0]))
        except ValueError:
            files = []
        if files:
            return source("screen", f"screen {window} -> {files[0]}", files[0])
        return source(
            "screen",
            f"screen {window}",
            problem=f"it runs in screen session {window} with logging off: turn it on in that "
            "window (C-a H, or `screen -L`), or pass --log PATH",
        )
    return source(
        "terminal",
        tty,
        problem=f"its output goes to a terminal ({tty}) that is not a tmux pane or a logged "
        f"screen window; {RELAUNCH}",
    )


def docker_source(container, host, since):
    short = container[:12]
    got = host.tool(["docker", "ps", "--no-trunc", "--format", CONTAINERS])
    if got is None:
        why = "but there is no docker command here"
    elif got[0] != 0:
        why = f"but {getpass()} may not run docker ({got[2]})"
    else:
        for line in got[1].splitlines():
            fields = line.split("\t")
            if len(fields) == 4 and fields[0] == container:
                return source(
                    "docker",
                    f"docker {fields[1]}",
                    container=container,
                    since=since,
                    name=fields[1],
                    compose_files=fields[2],
                    compose_service=fields[3],
                )
        why = "which `docker ps` does not list"
    return source(
        "docker",
        f"docker {short}",
        problem=f"it runs in Docker container {short}, {why}; pass --log PATH",
        container=container,
    )


def getpass():
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return f"uid {os.getuid()}"


def interpreter(pid, argv, env):
    """The Python that runs the server: argv[0] (a venv's python keeps its venv), else
    the executable."""
    first = argv[0] if argv else ""
    if os.path.basename(first).startswith("python"):
        if first.startswith("/"):
            return first
        for folder in env.get("PATH", "").split(":"):
            candidate = os.path.join(folder, first)
            if folder and os.access(candidate, os.X_OK):
                return candidate
    return link(f"/proc/{pid}/exe")


def installed_version(python, package, env, cache):
    if (python, package) not in cache:
        try:
            r = subprocess.run(
                [python, "-c", VERSION, package],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                timeout=20,
            )
            cache[python, package] = r.stdout.decode().strip() if r.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            cache[python, package] = None
    return cache[python, package]


def describe(pid, argv, pattern, versions, host):
    _, pgid, start = stat_fields(pid)
    info = {"pid": pid, "pgid": pgid, "start_time": start, "argv": argv}
    info["started_at"] = host.epoch(start)
    info["engine"], info["kind"] = pattern["engine"], pattern["kind"]
    try:
        info["user"] = pwd.getpwuid(os.stat(f"/proc/{pid}").st_uid).pw_name
    except (KeyError, OSError):
        info["user"] = None
    info["cwd"] = link(f"/proc/{pid}/cwd")
    try:
        env = environment(pid)
        info["env"], info["env_error"] = masked(env), None
    except OSError as e:
        env, info["env"], info["env_error"] = {}, None, e.strerror
    fds = [link(f"/proc/{pid}/fd/{n}") for n in (0, 1, 2)]
    info["stdin"], info["stdout"], info["stderr"] = fds
    target = next((t for t in fds[1:] if log_file(t)), None)
    info["log_deleted"] = bool(target and target.endswith(" (deleted)"))
    info["source"] = log_source(pid, fds, env, host, host.epoch(start))
    info["log"] = info["source"]["path"]
    python = interpreter(pid, argv, env)
    info["interpreter"] = python
    package = pattern["version_package"]
    info["engine_version"] = (
        installed_version(python, package, env, versions) if python and package else None
    )
    return info


def servers():
    me = os.getpid()
    found = {}
    parents = {}
    groups = {}  # pgid -> pids: a shell pipeline's members share one (the pipe's reader)
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        pid = int(name)
        try:
            argv = [a.decode("utf-8", "replace") for a in read(f"/proc/{pid}/cmdline").split(b"\0")]
            parents[pid], pgid, _ = stat_fields(pid)
            groups.setdefault(pgid, []).append(pid)
        except (OSError, IndexError):
            continue
        if argv and argv[-1] == "":
            argv.pop()
        pattern = server_pattern(argv)
        if pattern:
            found[pid] = (argv, pattern)
    out, versions = [], {}
    host = Host(sorted(parents), groups)
    for pid in sorted(found):
        if parents.get(pid) in found:
            continue  # a worker of a server already listed
        try:
            out.append(describe(pid, *found[pid], versions, host))
        except OSError:
            continue  # it exited meanwhile
    return out


def gpus():
    try:
        r = subprocess.run(
            ["nvidia-smi", "-L"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=20,
        )
    except FileNotFoundError:
        return None, "no nvidia-smi on this host"
    except (OSError, subprocess.SubprocessError) as e:
        return None, f"nvidia-smi -L failed: {e}"
    text = r.stdout.decode("utf-8", "replace")
    if r.returncode != 0:
        return None, (text.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
    return text, None


def past_logs(paths):
    """Those of `paths` that exist: when each was last written, and its size."""
    out = []
    for path in paths:
        try:
            st = os.stat(os.path.expanduser(path))
        except OSError:
            continue
        out.append({"path": path, "mtime": st.st_mtime, "size": st.st_size})
    return out


def gone(ask, logs):
    """Logs of servers that are gone (host/recent.py): in the places asked, the folders
    of the past `logs`, and the working folders of the user's shells."""
    folders = list(ask["places"]) + [os.path.dirname(os.path.expanduser(p)) for p in logs]
    return recent_logs(ask, folders + shell_folders())


def main():
    listing, error = gpus()
    found = servers()
    ask = REQUEST.get("recent")
    json.dump(
        {
            "hostname": socket.gethostname(),
            "python": sys.executable,
            "servers": found,
            "gpus": listing,
            "gpu_error": error,
            "logs": past_logs(REQUEST["logs"]),
            "recent": gone(ask, REQUEST["logs"]) if ask and not found else None,
            "now": time.time(),
        },
        sys.stdout,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
