"""Logs of servers that are gone, where people put them (shared into host/discover.py).

`nohup python -m sglang.launch_server ... > /tmp/sglang.log 2>&1 &` leaves a log no
running process names once the server died. Discovery, finding no server, looks
for such logs written in the last `within` seconds: the top level of each place
(the home folder, /tmp, /var/tmp, the folders of logs servers wrote before, the
working folders of the user's shells) and one level below it, never deeper. A
file is first judged by its lstat alone (regular, not hidden, recent, not empty);
only the newest `reads` of those have their first `head` bytes read, and a file
is a server's log when they hold one of an engine's markers (sent as data: the
engines' own, app/engines/). The scan stops at `budget` seconds, saying so: the
places' own listings and the reads of the newest `sure` files are always made, the
folders below the places and the other reads only within the budget.
docs/design/host-programs.md.
"""

import os
import time

SHELLS = frozenset(("bash", "zsh", "sh", "dash", "fish", "ksh", "mksh", "tcsh", "csh"))
# Written by people or programs, not a server's output, though they may name one
# (`python -m sglang...`; a JSON-lines record of launches, as sgwatch's restart history)
NOT_LOGS = (
    ".py", ".sh", ".ipynb", ".cfg", ".ini", ".yaml", ".yml", ".toml", ".md",
    ".json", ".jsonl", ".ndjson",
)  # fmt: skip


def shell_folders():
    """The working folders of the shells this user runs (/proc/PID/cwd)."""
    me, out = os.getuid(), []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != me:
                continue
            with open(f"/proc/{name}/comm") as f:
                if f.read().strip() not in SHELLS:
                    continue
            out.append(os.readlink(f"/proc/{name}/cwd"))
        except OSError:
            continue
    return out


def _entries(folder, since, files, below):
    """Recent files of `folder` into `files` ((mtime, path, size)); its folders into
    `below` ((mtime, path)) when `below` is a list."""
    try:
        listing = os.scandir(folder)
    except OSError:
        return
    with listing:
        for entry in listing:
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if below is not None:
                        below.append((entry.stat(follow_symlinks=False).st_mtime, entry.path))
                elif entry.is_file(follow_symlinks=False) and not entry.name.endswith(NOT_LOGS):
                    st = entry.stat(follow_symlinks=False)
                    if st.st_mtime >= since and st.st_size > 0:
                        files.append((st.st_mtime, entry.path, st.st_size))
            except OSError:
                continue


def engine_of(head, engines):
    """The first engine (in the order sent) one of whose markers `head` holds."""
    if head.startswith(b"#!"):
        return None  # a script that launches a server is not its log
    text = head.decode("utf-8", "replace")
    for name, markers in engines:
        if any(marker in text for marker in markers):
            return name
    return None


def _ends(path, size, ask):
    """(the first bytes, the last bytes from a line's start) of a file."""
    with open(path, "rb") as f:
        head = f.read(ask["head"])
        if size <= ask["head"]:
            return head, head
        f.seek(max(0, size - ask["tail"]))
        tail = f.read(ask["tail"])
    return head, tail[tail.find(b"\n") + 1 :] if size > ask["tail"] else tail


def recent_logs(ask, folders):
    """{"logs": the server logs found, newest first ({path, mtime, size, engine,
    tail}), "cut": whether the budget stopped the scan}.
    `ask`: {"engines": [[name, markers]], "within", "head", "tail", "reads", "sure",
    "most", "budget"}; `folders`: where to look."""
    start = time.monotonic()
    since = time.time() - ask["within"]
    files, below, seen, cut = [], [], set(), False
    for folder in folders:
        real = os.path.realpath(os.path.expanduser(folder))
        if real not in seen:
            seen.add(real)
            _entries(real, since, files, below)
    for _, folder in sorted(below, reverse=True):  # the folders written last first
        if time.monotonic() - start > ask["budget"]:
            cut = True
            break
        if folder not in seen:
            seen.add(folder)
            _entries(folder, since, files, None)
    logs = []
    for n, (mtime, path, size) in enumerate(sorted(files, reverse=True)[: ask["reads"]]):
        if n >= ask["sure"] and time.monotonic() - start > ask["budget"]:
            cut = True
            break
        try:
            head, tail = _ends(path, size, ask)
        except OSError:
            continue
        engine = engine_of(head, ask["engines"])
        if engine is not None:
            tail = tail.decode("utf-8", "replace")
            logs.append(
                {"path": path, "mtime": mtime, "size": size, "engine": engine, "tail": tail}
            )
            if len(logs) == ask["most"]:
                break
    return {"logs": logs, "cut": cut}
