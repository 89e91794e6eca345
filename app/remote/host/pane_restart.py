"""Runs on the host (sent over stdin to its Python; stdlib only, Python >= 3.8):
restart a server in its tmux pane the way its user would (or, with no pid, start one
in a pane: `sgwatch launch --in-tmux`).

  interrupt  Ctrl-C into the pane, as typed; the server (pid and start time, as
             discovery saw it) must end within grace_s, else nothing more is done
  prompt     wait until the pane's program is a shell again
  type       the edited command typed into the pane, then Enter: the pane's
             history shows it as typed, the user's shell, venv and environment apply
  find       the new server: a process on the pane's terminal running that argv

The request is the REQUEST literal below; the answer one JSON object on stdout:
{"pid", "start_time", "cwd"} or {"error", "stage"}.
"""

import json
import os
import subprocess
import time

from sgwatch.remote.host.proc import argv_of, new_server, started

REQUEST = None  # filled when sent: socket, pane, pid, start_time, command, argv, grace_s
SHELLS = {"bash", "zsh", "sh", "dash", "fish", "ksh", "tcsh", "csh"}
FIND_S = 30.0


class Failed(Exception):
    pass


def tmux(*args):
    sock = REQUEST["socket"]
    argv = ["tmux"] + (["-S", sock] if sock else []) + list(args)
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    if r.returncode != 0:
        raise Failed(r.stderr.decode("utf-8", "replace").strip() or f"tmux {args[0]} failed")
    return r.stdout.decode("utf-8", "replace").strip()


def until(check, seconds, stage, why):
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise Failed(f"{stage}: {why} after {seconds:g} s")
        time.sleep(0.1)


def find(tty, argv, old):
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == old:
            continue
        try:
            if os.readlink(f"/proc/{name}/fd/1") != tty:
                continue
            found = argv_of(name)
        except OSError:
            continue
        if found == argv:
            return int(name)
    return None


def main():
    req, pane = REQUEST, REQUEST["pane"]
    old, start = req["pid"], req["start_time"]
    if old is not None:  # else a first launch, in a new window
        tmux("send-keys", "-t", pane, "C-c")
        until(lambda: started(old) != start, req["grace_s"], "interrupt", "the server still runs")
    shell = lambda: tmux("display-message", "-p", "-t", pane, "#{pane_current_command}")  # noqa: E731
    until(lambda: shell() in SHELLS, 10, "prompt", "no shell prompt in the pane")
    tmux("send-keys", "-t", pane, "-l", req["command"])
    tmux("send-keys", "-t", pane, "Enter")
    tty = tmux("display-message", "-p", "-t", pane, "#{pane_tty}")
    new = []
    until(
        lambda: new.append(find(tty, req["argv"], old)) or new[-1],
        FIND_S,
        "find",
        "the typed command started no server",
    )
    return new_server(new[-1])


def answer():
    try:
        out = main()
    except Failed as e:
        out = {"error": str(e)}
    print(json.dumps(out))


if __name__ == "__main__":  # as sent: `python -` reads it as __main__
    answer()
