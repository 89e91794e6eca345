"""Discovery's cost on a busy host, with and without naming each server's log source.

On this machine: --procs sleeping processes (default 2,000) and two stand-in
servers (`python3 -m sgwatch.sim` that only sleeps), one writing to a file and
one piped into `tee` from outside its process group (the reader is then found
by the slower scan over every process). Each round runs the discovery program
as sgwatch sends it (`sh -s`, one round trip, here without SSH) from this
checkout and from --baseline (the commit before log sources), alternately.
Goal (issue 15): at most 1.5x the baseline's CPU time. Median and spread over --rounds.

    python bench/discover.py [--procs 2000] [--rounds 9] [--baseline REV]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sgwatch.engines import process_patterns
from sgwatch.remote import discover

ROOT = Path(__file__).resolve().parents[1]
SLEEPER = "import time\nwhile True:\n    time.sleep(60)\n"


def baseline_at(rev: str) -> str:
    """The discovery script as `rev` sent it: its program (then in app/remote/, the
    patterns written over its line `PATTERNS = None`) run by the Python found as now."""
    program = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:app/remote/host_discover.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    patterns = f"PATTERNS = json.loads({json.dumps(process_patterns())!r})"
    return discover.run_by_found_python(program.replace("PATTERNS = None", patterns, 1))


def timed(text: str) -> tuple[float, dict]:
    """CPU seconds (user + system) the host spent, and what it answered. CPU time,
    not wall time: on a shared machine the wall clock mostly measures the neighbours."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(["sh", "-s"], input=text.encode(), capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, json.loads(r.stdout)


def busy_host(folder: Path, procs: int) -> list[subprocess.Popen]:
    """Each in a process group of its own: `procs` sleepers with a stand-in server
    writing to a file; a stand-in server whose output is piped into tee (in another
    group, as a job-control shell starts a pipeline's members, so tee is found by the
    scan over every process, the slow path)."""
    fake = folder / "fake" / "sgwatch" / "sim"
    fake.mkdir(parents=True)
    (fake.parent / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text(SLEEPER)
    server = ["python3", "-m", "sgwatch.sim", "--tp", "2"]
    env = {**os.environ, "PYTHONPATH": str(folder / "fake")}
    shell = (
        f"for i in $(seq {procs}); do sleep 3600 & done\n"
        f"{' '.join(server)} > {folder / 'file.log'} 2>&1 &\n"
        "wait\n"
    )
    read, write = os.pipe()
    started = [
        subprocess.Popen(["sh", "-c", shell], env=env, start_new_session=True),
        subprocess.Popen(server, env=env, stdout=write, stderr=write, start_new_session=True),
        subprocess.Popen(
            ["tee", str(folder / "tee.log")],
            stdin=read,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        ),
    ]
    os.close(read)
    os.close(write)
    return started


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--procs", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--baseline", default="7c30e55~1")
    args = p.parse_args()
    old, new = baseline_at(args.baseline), discover.script(process_patterns())
    with tempfile.TemporaryDirectory() as tmp:
        groups = busy_host(Path(tmp), args.procs)
        try:
            deadline = time.monotonic() + 60
            while True:
                _, found = timed(new)
                ours = [s for s in found["servers"] if tmp in (s["log"] or "")]
                count = len([d for d in os.listdir("/proc") if d.isdigit()])
                if (len(ours) == 2 and count > args.procs) or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            kinds = sorted(s["source"]["label"].replace(tmp, "TMP") for s in ours)
            print(f"{count} processes; sources: {kinds}")
            ratios, olds, news = [], [], []
            for _ in range(args.rounds):
                o, _ = timed(old)
                n, _ = timed(new)
                olds.append(o)
                news.append(n)
                ratios.append(n / o)
        finally:
            for group in groups:
                os.killpg(group.pid, signal.SIGKILL)
                group.wait()

    def spread(xs: list[float], unit: str, scale: float = 1.0) -> str:
        low, mid, high = (x * scale for x in (min(xs), statistics.median(xs), max(xs)))
        return f"median {mid:.2f}{unit} (min {low:.2f}, max {high:.2f})"

    print(f"baseline discovery: {spread(olds, ' ms CPU', 1000)}")
    print(f"with log sources:   {spread(news, ' ms CPU', 1000)}")
    print(f"ratio:              {spread(ratios, 'x')}  (goal <= 1.5x)")


if __name__ == "__main__":
    main()
