"""The dashboard's idle cost as a user runs it: `sgwatch gpu129` in a terminal (tmux,
140x45) over the test sshd on loopback, on a simulated server that is ready and
quiet (SGLang logs nothing while no request comes), GPU samples at 2 Hz from the
nvidia-smi stand-in. CPU share of one core from the process's own ticks
(/proc/PID/stat utime + stime) over --seconds, after the screen shows the server
ready and has settled. Baseline in the same run: a bare Textual app (a footer
only) in the same terminal. Goal (issue 18): <= 1 % of a core. Median and spread
over --repeat runs, each a fresh sgwatch process.

    python bench/idle_ssh.py [--seconds 30] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import sshd

from sgwatch.transport.ssh import SshTransport
from tests.integration.headless import QWEN, SimHost, cli_env

SIZE = ("-x", "140", "-y", "45")
TICK_S = os.sysconf("SC_CLK_TCK")
BARE = """
from textual.app import App
from textual.widgets import Footer
class Bare(App):
    def compose(self):
        yield Footer()
Bare().run()
"""


def ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def until(look, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not look():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.2)


def share(argv: list[str], env: dict[str, str], shown: str, seconds: float) -> float:
    """CPU share of `argv` run in a fresh tmux session, measured once `shown` is on
    its screen and a settling pause has passed."""
    name = f"idle{os.getpid()}-{time.monotonic_ns()}"
    # A tmux server of its own: a running one would give the pane its environment.
    tmux = ["tmux", "-L", name]
    cmd = " ".join(shlex.quote(a) for a in argv)
    started = subprocess.run(
        [*tmux, "new", "-d", "-s", name, *SIZE, cmd], env=env, capture_output=True
    )
    if started.returncode:
        raise RuntimeError(f"tmux: {started.stderr.decode().strip()}")
    try:
        pane = subprocess.run(
            [*tmux, "display", "-p", "-t", name, "#{pane_pid}"],
            capture_output=True,
            text=True,
            check=True,
        )
        pid = int(pane.stdout)

        def screen() -> str:
            out = subprocess.run([*tmux, "capture-pane", "-p", "-t", name], capture_output=True)
            return out.stdout.decode(errors="replace")

        until(lambda: shown in screen(), 60, f"{shown!r} on screen")
        time.sleep(5)  # connect, history and the first GPU rows are behind it
        t0, c0 = time.monotonic(), ticks(pid)
        time.sleep(seconds)
        return (ticks(pid) - c0) / TICK_S / (time.monotonic() - t0)
    finally:
        subprocess.run([*tmux, "kill-server"], check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with sshd() as (srv, tmp):
        env = cli_env(srv, tmp / "home")
        env["XDG_STATE_HOME"] = str(tmp / "state")
        env.pop("TMUX", None)
        sims = SimHost(srv, lambda alias: SshTransport(alias, config=[str(srv.ssh_config)]), tmp)
        log = tmp / "server.log"
        sims.launch(log, *QWEN, speed="50")
        try:
            until(lambda: log.exists() and b"fired up" in log.read_bytes(), 120, "server ready")
            ours, bare = [], []
            for _ in range(args.repeat):
                bare.append(share([sys.executable, "-c", BARE], env, "palette", args.seconds))
                ours.append(
                    share([sys.executable, "-m", "sgwatch", "gpu129"], env, "READY", args.seconds)
                )
                print(f"  sgwatch {ours[-1]:.2%}  bare Textual app {bare[-1]:.2%}", flush=True)
        finally:
            sims.stop()
    print(
        f"idle over SSH ({args.repeat} runs of {args.seconds:.0f} s): sgwatch median "
        f"{statistics.median(ours):.2%} (spread {min(ours):.2%}-{max(ours):.2%}), bare Textual "
        f"app {statistics.median(bare):.2%}; goal <= 1 %"
    )


if __name__ == "__main__":
    main()
