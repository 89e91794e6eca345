"""Runs on the host (fed to Python by discover.sh; stdlib only, Python >= 3.8).

Prints one JSON object: the server processes that match PATTERNS (each
engine's `python -m MODULE`, script or `PROGRAM SUBCOMMAND` launcher, sent by
the caller as data: app/engines/), and `nvidia-smi -L`. For each server: its
engine and kind, pid, pgid, start time (with the pid, its identity), user, argv,
cwd, environment with secrets masked here, before anything leaves the host,
stdin/stdout/stderr targets and the log file they name, the interpreter and the
engine's version as installed there. A server's workers are not listed
separately (only the topmost match counts).
"""

import json
import os
import pwd
import re
import socket
import subprocess
import sys

SECRET = re.compile("TOKEN|KEY|SECRET|PASSWORD", re.IGNORECASE)
MASK = "***"
VERSION = "import sys; from importlib.metadata import version; print(version(sys.argv[1]))"
# Replaced by the caller: [{"engine", "kind", "module", "script", "launcher", "version_package"}]
PATTERNS = None


def matches(pattern, arg, nxt):
    if pattern["module"] and arg == "-m" and nxt == pattern["module"]:
        return True
    if pattern["script"] and arg.endswith(pattern["script"]):
        return True
    launcher = pattern["launcher"]
    return bool(launcher) and os.path.basename(arg) == launcher[0] and nxt == launcher[1]


def server_pattern(argv):
    """The pattern of the server an argv starts, or None."""
    for i, arg in enumerate(argv):
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        for pattern in PATTERNS:
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


def describe(pid, argv, pattern, versions):
    _, pgid, start = stat_fields(pid)
    info = {"pid": pid, "pgid": pgid, "start_time": start, "argv": argv}
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
    info["log"] = log_file(target)
    info["log_deleted"] = bool(target and target.endswith(" (deleted)"))
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
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        pid = int(name)
        try:
            argv = [a.decode("utf-8", "replace") for a in read(f"/proc/{pid}/cmdline").split(b"\0")]
            parents[pid] = stat_fields(pid)[0]
        except (OSError, IndexError):
            continue
        if argv and argv[-1] == "":
            argv.pop()
        pattern = server_pattern(argv)
        if pattern:
            found[pid] = (argv, pattern)
    out, versions = [], {}
    for pid in sorted(found):
        if parents.get(pid) in found:
            continue  # a worker of a server already listed
        try:
            out.append(describe(pid, *found[pid], versions))
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


def main():
    listing, error = gpus()
    json.dump(
        {
            "hostname": socket.gethostname(),
            "python": sys.executable,
            "servers": servers(),
            "gpus": listing,
            "gpu_error": error,
        },
        sys.stdout,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
