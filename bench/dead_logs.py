"""Discovery's look for the logs of servers that are gone, on a folder of 100,000 files.

A generated place (default 100,000 files): 40 % at its top level, the rest in 60
folders below it, and a folder two levels down that must not be walked; all written
two days ago but --recent plain files and 3 server logs written in the last hour
(one of them below the top level). Each round runs the discovery program as sgwatch
sends it (`sh -s`, one round trip, here without SSH, with no server patterns so the
look always runs), asked to look in that place (and, as on any host, the working
folders of this machine's shells), the same program not asked to look (the
difference is the look's cost), and `find PLACE -maxdepth 2 -type f -mmin -60`, the
syscalls' floor for the same listing. Goal (issue 25): the whole answer under 1 s. Wall time
(the answer's latency) and CPU time, median (min-max) over --rounds; the page cache is
warm (the files were just written), as it is for a /tmp in use.

    python bench/dead_logs.py [--files 100000] [--recent 500] [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sgwatch.engines import all_engines
from sgwatch.remote import discover

LOG = b"[2026-01-10 08:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
PLAIN = b"build output, nothing a server prints\n"


def place(folder: Path, files: int, recent: int) -> list[str]:
    """Fill `folder`; the paths of the server logs in it, newest first."""
    old = time.time() - 2 * 86400
    below = [folder / f"d{n:02d}" for n in range(60)]
    for d in below:
        d.mkdir()
    (folder / "d00" / "deep").mkdir()
    top = int(files * 0.4)
    for n in range(files):
        where = folder if n < top else below[n % 60]
        path = where / f"f{n:06d}.out"
        path.write_bytes(PLAIN)
        when = old if n >= recent else time.time() - 60 - n % 3000
        os.utime(path, (when, when))
    deep = folder / "d00" / "deep" / "too-deep.log"
    deep.write_bytes(LOG)  # two levels down: not looked at
    logs = [folder / "sglang.log", folder / "d07" / "server.log", folder / "nohup.out"]
    for age, log in zip((30, 900, 2400), logs, strict=True):
        log.write_bytes(LOG)
        os.utime(log, (time.time() - age, time.time() - age))
    return [str(p) for p in logs]


def timed(text: str) -> tuple[float, float, dict]:
    """(wall s, CPU s, the answer) of one discovery run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    r = subprocess.run(["sh", "-s"], input=text.encode(), capture_output=True, check=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, json.loads(r.stdout)


def timed_find(folder: str) -> tuple[float, float]:
    """(wall s, CPU s) of find listing the recent files two levels deep."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    argv = ["find", folder, "-maxdepth", "2", "-type", "f", "-mmin", "-60"]
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.0f} ms ({min(xs) * 1000:.0f}-{max(xs) * 1000:.0f})"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files", type=int, default=100_000)
    p.add_argument("--recent", type=int, default=500, help="plain files written in the hour")
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args()
    markers = [(e.name, e.markers) for e in all_engines()]
    with tempfile.TemporaryDirectory() as tmp:
        made = time.monotonic()
        expected = place(Path(tmp), args.files, args.recent)
        print(f"{args.files} files made in {time.monotonic() - made:.1f} s")
        looking = discover.script([], [], discover.gone_logs(markers, [tmp]))
        plain = discover.script([], [])
        runs: dict[str, list[tuple[float, float]]] = {"plain": [], "looking": [], "find": []}
        cut = 0
        for _ in range(args.rounds):
            wall, cpu, _ = timed(plain)
            runs["plain"].append((wall, cpu))
            wall, cpu, answer = timed(looking)
            runs["looking"].append((wall, cpu))
            runs["find"].append(timed_find(tmp))
            found = [log["path"] for log in answer["recent"]["logs"] if log["path"].startswith(tmp)]
            cut += answer["recent"]["cut"]
            assert answer["recent"]["cut"] or found == expected, found
    for name, rows in runs.items():
        walls, cpus = [w for w, _ in rows], [c for _, c in rows]
        print(f"{name:8}: wall {spread(walls)}, CPU {spread(cpus)}")
    added = [b[0] - a[0] for a, b in zip(runs["plain"], runs["looking"], strict=True)]
    print(f"the look adds: wall {spread(added)}  (goal: the answer under 1 s)")
    print(f"cut by the budget in {cut} of {args.rounds} rounds (else all 3 logs found)")


if __name__ == "__main__":
    main()
