"""The past's first part read by the worker process, the rest here: the join gives the
state of the whole, however the bytes arrive; a worker that fails loses nothing."""

import asyncio
import contextlib
import os
import random
import signal
from pathlib import Path

from sgwatch.core.summary import summarize
from sgwatch.engines import by_name
from sgwatch.live.ingest import LogIngest
from sgwatch.live.pastsplit import PastSplit
from tests.integration.helpers import until
from tests.unit.test_past_split import SGLANG_START, decode, whole


def workers() -> list[int]:
    """This process's pastworker children still running."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            if b"sgwatch.live.pastworker" in cmd and int(stat[1]) == os.getpid():
                found.append(int(pid))
    return found


def serving_log(n: int) -> bytes:
    return "".join(f"{x}\n" for x in SGLANG_START + [decode(i) for i in range(n)]).encode()


async def split_read(data: bytes, seed: int, kill: bool = False) -> tuple[LogIngest, bool, int]:
    """Route `data` in random pieces; returns the joined ingest, whether the join was
    exact, and where the cut fell."""
    split = PastSplit(len(data), by_name("sglang").split_prefix, share=0.6)
    await split.start()
    if kill:  # a worker that dies
        # Popen returns once exec began; the kernel names the new program a moment later
        await until(workers, timeout=10)
        (worker,) = workers()
        os.kill(worker, signal.SIGKILL)
    rest, rnd, at = LogIngest(engine="sglang"), random.Random(seed), 0
    try:
        while at < len(data):
            n = rnd.choice([1, 7, 100, 4096, 65536])
            rest.feed(split.route(data[at : at + n]))
            at += n
        first = await split.first_part()
        assert (first is None) == kill  # None: the worker failed
        if first is None:
            first = LogIngest()
            for block in split.first_bytes():
                first.feed(block)
        exact = first.extend(rest)
        if not exact:
            for block in split.rest_bytes():
                first.feed(block)
        return first, exact, split.cut
    finally:
        split.close()


def test_the_join_equals_the_whole_however_the_bytes_arrive():
    data = serving_log(20_000)
    want = summarize(whole(data).state)
    for seed in range(3):
        first, exact, cut = asyncio.run(split_read(data, seed))
        assert exact and 0.6 * len(data) <= cut < 0.6 * len(data) + 200
        assert data[cut - 1 : cut + 1] == b"\n["  # a timestamped line starts the rest
        assert summarize(first.state) == want


def test_a_worker_that_fails_is_read_here():
    data = serving_log(5_000)
    first, _, _ = asyncio.run(split_read(data, 0, kill=True))
    assert summarize(first.state) == summarize(whole(data).state)
