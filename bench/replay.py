"""`sgwatch replay` of a 1 GB log: wall time and peak RSS, with `/usr/bin/time -v`.

The log is the bundled sample warmup followed by 7 M serving lines from
parse.py's generator (1.09 GB), written once to /tmp. Each round times the
baseline, a bare split of the same file (read in 1 MiB chunks, decoded and
split, nothing else), then the replay; prints the median and spread of the
replay's seconds, its ratio to the baseline and its peak RSS, and the
machine's load average (1 min) over the rounds. Goal (issue 14): <= 15 s and
<= 100 MB peak RSS.

    python bench/replay.py [--lines N] [--repeat R] [--log PATH]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from parse import make_log

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "app" / "samples" / "qwen27b-tp2-warmup.log"
BARE_SPLIT = """
import codecs, sys
decoder, carry, count = codecs.getincrementaldecoder("utf-8")(errors="replace"), "", 0
with open(sys.argv[1], "rb") as f:
    while chunk := f.read(1 << 20):
        parts = (carry + decoder.decode(chunk)).split("\\n")
        carry = parts.pop()
        count += len(parts)
print(count + bool(carry))
"""


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of a command, as /usr/bin/time -v reports them."""
    done = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, check=True)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    assert wall and rss, done.stderr
    h, m, s = wall.groups()
    return int(h or 0) * 3600 + int(m) * 60 + float(s), int(rss[1]) / 1024


def spread(values: list[float], unit: str) -> str:
    return f"{statistics.median(values):.2f}{unit} median ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=7_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--log", type=Path, default=Path("/tmp/sgwatch-replay-1g.log"))
    args = ap.parse_args()
    if not args.log.exists():
        with open(args.log, "wb") as out:
            out.write(SAMPLE.read_bytes())
            out.write(make_log(args.lines))
    sgwatch = shutil.which("sgwatch", path=str(Path(sys.executable).parent))
    assert sgwatch, "sgwatch is not installed beside this Python"
    base, secs, rss, load = [], [], [], [os.getloadavg()[0]]
    for _ in range(args.repeat):
        base.append(timed([sys.executable, "-c", BARE_SPLIT, str(args.log)])[0])
        s, r = timed([sgwatch, "replay", str(args.log)])
        secs.append(s)
        rss.append(r)
        load.append(os.getloadavg()[0])
    size = args.log.stat().st_size
    print(
        f"log: {args.log} ({size / 1e9:.2f} GB); {args.repeat} rounds; "
        f"load average {min(load):.1f}-{max(load):.1f}"
    )
    print(f"  bare split (baseline)  {spread(base, ' s')}")
    print(f"  sgwatch replay         {spread(secs, ' s')}")
    ratios = [s / b for s, b in zip(secs, base, strict=True)]
    print(f"  replay / bare split    {spread(ratios, 'x')}")
    print(f"  replay peak RSS        {spread(rss, ' MB')}")


if __name__ == "__main__":
    main()
