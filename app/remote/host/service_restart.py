"""Runs on the host (sent over stdin to its Python; stdlib only, Python >= 3.8):
restart a server's Docker container or systemd unit with its own command, the same
flags (`docker restart CONTAINER`, `systemctl --no-ask-password restart UNIT`): its
owner's setup is not changed, only run again.

  restart   the tool, as the user; its refusal (no permission, a password needed)
            is the answer, and nothing else is done
  find      the new server: a process in the container's or unit's cgroup running
            the same argv, not the old one (pid and start time)

The request is the REQUEST literal below; the answer one JSON object on stdout:
{"pid", "start_time", "cwd"} or {"error"}.
"""

import json
import os
import subprocess
import time

from sgwatch.remote.host.proc import argv_of, new_server, started

# filled when sent: tool (its argv), cgroup (part of the path), argv, pid, start_time
REQUEST = None
FIND_S = 60.0


def find(req):
    for name in sorted(os.listdir("/proc"), key=lambda n: (not n.isdigit(), n.zfill(10))):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            with open(f"/proc/{pid}/cgroup") as f:
                if req["cgroup"] not in f.read():
                    continue
            argv = argv_of(pid)
        except OSError:
            continue
        if argv == req["argv"] and (pid, started(pid)) != (req["pid"], req["start_time"]):
            return pid
    return None


def main():
    req = REQUEST
    r = subprocess.run(req["tool"], stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    if r.returncode != 0:
        lines = (r.stderr or r.stdout).decode("utf-8", "replace").strip().splitlines()
        return {"error": lines[-1] if lines else f"{req['tool'][0]} exited {r.returncode}"}
    deadline = time.monotonic() + FIND_S
    while time.monotonic() < deadline:
        pid = find(req)
        if pid is not None:
            return new_server(pid)
        time.sleep(0.2)
    return {"error": f"no server in {req['cgroup']} after {FIND_S:g} s"}


if __name__ == "__main__":  # as sent: `python -` reads it as __main__
    print(json.dumps(main()))
