"""Parser throughput on a 1 M-line log shaped like real serving output.

Times a bare line split (the baseline: decode and split the same bytes,
nothing else), the sgwatch line splitter, the parser (split + parse into
events; for scale, the same without its bulk path: `parse` line by line) and
the whole pipeline (+ engine detection and the reducer), each as a ratio to
the baseline measured in the same round: the median over the rounds and the
spread. Times are the process's CPU time, which other work on a shared
machine disturbs less than the wall clock (all of it runs on one thread).
Target: the parser costs at most 8x the bare split. `--engine vllm` measures
vLLM's parser on a vLLM serving log instead (target: the SGLang parser's ratio).

    python bench/parse.py [--lines N] [--repeat R] [--engine sglang|vllm]
"""

from __future__ import annotations

import argparse
import codecs
import os
import random
import resource
import statistics
import time
from collections.abc import Callable

from sgwatch.core.linesplit import LineSplitter
from sgwatch.engines.sglang.parse import Parser as SglangParser
from sgwatch.engines.vllm.parse import Parser as VllmParser
from sgwatch.live.ingest import LogIngest

CHUNK = 1 << 20
Maker = Callable[[random.Random, str], str]  # one line, from the draws and its stamp


def _clock(i: int) -> str:
    """The time of day of the i-th synthetic line: 50 lines a second from 10:00:00."""
    sec = 10 * 3600 + i // 50
    return f"{sec // 3600 % 24:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}"


def _mixed(n_lines: int, seed: int, stamp: str, kinds: list[tuple[float, Maker]]) -> bytes:
    """`n_lines` lines: each of the first kind whose cumulative share a draw is under
    (the last kind's share is 1), stamped `stamp` + the line's time of day."""
    rnd = random.Random(seed)
    out = []
    for i in range(n_lines):
        ts = f"{stamp} {_clock(i)}"
        r = rnd.random()
        out.append(next(make for share, make in kinds if r < share)(rnd, ts))
    return "".join(out).encode()


def make_log(n_lines: int, seed: int = 7) -> bytes:
    """Mostly `Decode batch`, some `Prefill batch`, access lines; TP0-prefixed."""
    return _mixed(
        n_lines,
        seed,
        "2026-11-30",
        [
            (0.80, lambda rnd, ts: (
                f"[{ts} TP0] Decode batch, #running-req: {rnd.randint(1, 64)}, "
                f"#token: {rnd.randint(1000, 90000)}, token usage: {rnd.random():.2f}, "
                f"cuda graph: True, gen throughput (token/s): {rnd.uniform(50, 3000):.2f}, "
                f"#queue-req: {rnd.randint(0, 9)}\n"
            )),
            (0.90, lambda rnd, ts: (
                f"[{ts} TP0] Prefill batch, #new-seq: 1, #new-token: {rnd.randint(8, 8192)}, "
                f"#cached-token: {rnd.randint(0, 4096)}, token usage: {rnd.random():.2f}, "
                f"#running-req: {rnd.randint(0, 63)}, #queue-req: 0, cuda graph: True, "
                f"input throughput (token/s): {rnd.uniform(100, 30000):.2f}\n"
            )),
            (1.0, lambda rnd, ts: (
                f"[{ts}] INFO:     127.0.0.1:{rnd.randint(30000, 60000)} - "
                f'"POST /v1/chat/completions HTTP/1.1" 200 OK\n'
            )),
        ],
    )  # fmt: skip


def make_vllm_log(n_lines: int, seed: int = 7) -> bytes:
    """The API server's lines under load: `Avg generation throughput` stats (one per
    engine and 10 s window; every 10th with a SpecDecoding line after it) and access lines."""
    return _mixed(
        n_lines,
        seed,
        "11-30",
        [
            (0.45, lambda rnd, ts: (
                f"(APIServer pid=3646) INFO {ts} [loggers.py:271] Engine 000: Avg prompt "
                f"throughput: {rnd.uniform(0, 20000):.1f} tokens/s, Avg generation throughput: "
                f"{rnd.uniform(50, 3000):.1f} tokens/s, Running: {rnd.randint(1, 64)} reqs, "
                f"Waiting: {rnd.randint(0, 9)} reqs, "
                f"GPU KV cache usage: {rnd.uniform(0, 100):.1f}%, "
                f"Prefix cache hit rate: {rnd.uniform(0, 100):.1f}%\n"
            )),
            (0.50, lambda rnd, ts: (
                f"(APIServer pid=3646) INFO {ts} [metrics.py:96] SpecDecoding metrics: Mean "
                f"acceptance length: {rnd.uniform(1, 4):.2f}, Accepted throughput: "
                f"{rnd.uniform(10, 900):.2f} tokens/s, Drafted throughput: 1200.00 tokens/s, "
                f"Accepted: 530 tokens, Drafted: 1061 tokens, Per-position acceptance rate: "
                f"0.721, 0.503, 0.276, Avg Draft acceptance rate: 50.0%\n"
            )),
            (1.0, lambda rnd, ts: (
                f"(APIServer pid=3646) INFO:     127.0.0.1:{rnd.randint(30000, 60000)} - "
                f'"POST /v1/chat/completions HTTP/1.1" 200 OK\n'
            )),
        ],
    )  # fmt: skip


ENGINES = {"sglang": (make_log, SglangParser), "vllm": (make_vllm_log, VllmParser)}
Parser = SglangParser  # the parser the stages time; main() sets it from --engine


def bare_split(data: bytes) -> int:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    carry, count = "", 0
    for i in range(0, len(data), CHUNK):
        parts = (carry + decoder.decode(data[i : i + CHUNK])).split("\n")
        carry = parts.pop()
        for _ in parts:
            count += 1
    return count + bool(carry)


def splitter(data: bytes) -> int:
    s, count = LineSplitter(), 0
    for i in range(0, len(data), CHUNK):
        count += len(s.feed(data[i : i + CHUNK]))
    return count + len(s.flush())


def split_and_parse(data: bytes) -> int:
    s, parser, count = LineSplitter(), Parser(), 0
    for i in range(0, len(data) + 1, CHUNK):
        lines = s.feed(data[i : i + CHUNK]) if i < len(data) else s.flush()
        parser.parse_lines(lines)
        count += len(lines)
    return count


def split_and_parse_each(data: bytes) -> int:
    """The parser without its bulk path: `parse` on every line."""
    s, parser, count = LineSplitter(), Parser(), 0
    for i in range(0, len(data) + 1, CHUNK):
        lines = s.feed(data[i : i + CHUNK]) if i < len(data) else s.flush()
        for line in lines:
            parser.parse(line)
        count += len(lines)
    return count


def pipeline(data: bytes) -> int:
    ingest = LogIngest()
    for i in range(0, len(data), CHUNK):
        ingest.feed(data[i : i + CHUNK])
    ingest.flush()
    assert ingest.state.throughput.samples > 0
    return ingest.state.lines


STAGES = (
    ("line splitter", splitter),
    ("split + parse (events)", split_and_parse),
    ("split + parse line by line", split_and_parse_each),
    ("split + parse + reduce", pipeline),
)


def timed(fn, data: bytes) -> tuple[float, int]:
    t0 = time.process_time()
    lines = fn(data)
    return time.process_time() - t0, lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5, help="rounds (default 5)")
    ap.add_argument("--engine", choices=sorted(ENGINES), default="sglang")
    args = ap.parse_args()
    global Parser
    make, Parser = ENGINES[args.engine]
    data = make(args.lines)
    print(
        f"{args.engine} log: {args.lines:,} lines, {len(data) / 1e6:.1f} MB; {args.repeat} rounds"
    )
    base: list[float] = []
    ratios: dict[str, list[float]] = {name: [] for name, _ in STAGES}
    load = [os.getloadavg()[0]]
    for _ in range(args.repeat):  # each round: the baseline, then every stage
        base_s, base_n = timed(bare_split, data)
        base.append(base_s)
        for name, fn in STAGES:
            secs, n = timed(fn, data)
            assert n == base_n, (name, n, base_n)
            ratios[name].append(secs / base_s)
        load.append(os.getloadavg()[0])
    print(
        f"  {'bare split (baseline)':<24} {base_n / statistics.median(base):>10,.0f} lines/s"
        f"  ({min(base):.3f}-{max(base):.3f} s)"
    )
    for name, rs in ratios.items():
        print(f"  {name:<24} {statistics.median(rs):>6.2f}x median  ({min(rs):.2f}-{max(rs):.2f}x)")
    print(f"load average (1 min) {min(load):.1f}-{max(load):.1f}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss:.0f} MB (includes the {len(data) / 1e6:.0f} MB log held in memory)")


if __name__ == "__main__":
    main()
