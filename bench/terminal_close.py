"""The terminal closed as the demo reaches READY: how long until sgwatch and everything
it started are gone (issue 29's goal: within 2 s, 4 of 4 tries).

Each try runs `sgwatch --demo` as the only command of a tmux pane on a tmux server of
its own, waits for READY (or SERVING) on the screen, takes the pids of sgwatch and all
its descendants, then kills the tmux server (the pane gets SIGHUP, as a closed window
does) and times each pid's end. Prints one line a try: the time until all were gone
(and the demo's folder, if it was left), and the last few to go (pid, how long it
lived on, its command line) when over the goal.

    python bench/terminal_close.py [--tries 4] [--verbose]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sgwatch.sim.common.proctree import DEMO_PREFIX
from tests.integration.sshd import alive, cmdline, descendants

GOAL_S = 2.0


def tmux(socket: str, *args: str, env: dict[str, str] | None = None) -> str:
    r = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, env=env)
    return r.stdout


def one_try(home: Path) -> tuple[float, list[tuple[int, float, str]], list[str]]:
    socket = f"sgwatch-close-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    cmd = f"exec {sys.executable} -m sgwatch --demo"
    tmux(socket, "new-session", "-d", "-s", "t", "-x", "140", "-y", "45", cmd, env=env)
    pane = int(tmux(socket, "list-panes", "-F", "#{pane_pid}").split()[0])
    try:
        deadline = time.monotonic() + 120
        while not any(w in tmux(socket, "capture-pane", "-p") for w in ("READY", "SERVING")):
            if time.monotonic() > deadline:
                raise SystemExit("the demo never showed READY")
            time.sleep(0.05)
        pids = [pane, *descendants(pane)]
        names = {p: " ".join(" ".join(cmdline(p)).split())[:90] for p in pids if alive(p)}
        cwds = {Path(os.readlink(f"/proc/{p}/cwd")) for p in names}
        folders = {f for f in cwds if f.name.startswith(DEMO_PREFIX)}
        t0 = time.monotonic()
        tmux(socket, "kill-server")
        ended: dict[int, float] = {}
        while len(ended) < len(pids) and time.monotonic() - t0 < 10:
            for p in pids:
                if p not in ended and not alive(p):
                    ended[p] = time.monotonic() - t0
            time.sleep(0.005)
        took = max(ended.get(p, 10.0) for p in pids)
        last = sorted(((ended.get(p, 10.0), p) for p in pids), reverse=True)[:4]
        left = [str(f) for f in folders if f.exists()]
        return took, [(p, t, names.get(p, "?")) for t, p in last], left
    finally:
        tmux(socket, "kill-server")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=4)
    parser.add_argument("--verbose", action="store_true", help="the last to go, every try")
    args = parser.parse_args()
    times = []
    for n in range(1, args.tries + 1):
        with tempfile.TemporaryDirectory(prefix="sgwatch-close-") as home:
            took, last, left = one_try(Path(home))
        times.append(took)
        folder = f"; the demo's folder left: {left}" if left else ""
        print(f"try {n}: all gone {took:.2f} s after the close{folder}", flush=True)
        if took > GOAL_S or args.verbose:
            for pid, t, name in last:
                print(f"    pid {pid} ended at {t:.2f} s: {name}")
    within = sum(t <= GOAL_S for t in times)
    print(f"{within} of {len(times)} within {GOAL_S:g} s; max {max(times):.2f} s")
    print(f"load average (1 min): {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
