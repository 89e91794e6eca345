"""The tmux follower's private pipe file is trimmed while it is followed, through the
real tmux on the sshd's host: a pane printing far more than a segment, in batches; each
time sgwatch has shown a batch, the folder holds one segment, under its size, and every
line came once, in order, across all the trims."""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
from contextlib import aclosing

from sgwatch.core.linesplit import LineSplitter
from sgwatch.remote.discover import LogSource
from sgwatch.remote.logfollow import LogData
from sgwatch.remote.panefollow import PaneFollower
from tests.integration.helpers import arun, wait_until
from tests.integration.test_sources_tmux import left_alone, private_folders, tmux  # noqa: F401

TRIM = 4096  # bytes: each batch below spans about ten segments
BATCHES, PER_BATCH = 4, 400
# Numbered lines of ~100 bytes in batches; after each, the writer waits for "go-K".
WRITER = f"""import os, time
for k in range(1, {BATCHES + 1}):
    for i in range((k - 1) * {PER_BATCH} + 1, k * {PER_BATCH} + 1):
        print(f"n{{i}} " + "x" * 90, flush=True)
    print(f"end-{{k}}", flush=True)
    while not os.path.exists(f"go-{{k}}"):
        time.sleep(0.02)
print("done")
"""


def test_pane_lines_come_once_across_many_trims_of_the_pipe_file(host, link, tmux, tmp_path):  # noqa: F811
    (tmp_path / "writer.py").write_text(WRITER)
    pane = tmux.pane("main:0.0", "#{pane_id}")
    source = LogSource("tmux", "tmux main:0.0", detail={"pane": pane, "socket": str(tmux.socket)})
    kept: list[list[tuple[str, int]]] = []  # the folder's segments after each batch

    async def until(events, got: bytearray, marker: bytes) -> None:
        while marker not in got:
            ev = await anext(events)
            if isinstance(ev, LogData):
                got += ev.data

    async def body() -> tuple[bytearray, list]:
        got = bytearray()
        the_link = link("gpu129")
        follower = PaneFollower(the_link, source)
        follower.trim = TRIM
        async with aclosing(follower.events()) as events:
            await anext(events)  # opened: the pipe is on before the writer starts
            (folder,) = await asyncio.to_thread(wait_until, lambda: private_folders(host))
            command = f"cd {shlex.quote(str(tmp_path))} && {sys.executable} writer.py"
            await asyncio.to_thread(tmux, "send-keys", "-t", "main:0.0", command, "Enter")
            for k in range(1, BATCHES + 1):
                await until(events, got, b"end-%d\r\n" % k)  # all of it shown
                segments = sorted(folder.glob("out.*"))
                kept.append([(p.name, p.stat().st_size) for p in segments])
                (tmp_path / f"go-{k}").touch()
            await until(events, got, b"done\r\n")
        await the_link.close()
        return got, [folder]

    got, folders = arun(body(), timeout=60)
    lines = LineSplitter().feed(bytes(got))
    numbered = [line.split()[0] for line in lines if re.fullmatch(r"n\d+ x+", line)]
    assert numbered == [f"n{i}" for i in range(1, BATCHES * PER_BATCH + 1)]  # once, in order
    # After each batch: one segment, under TRIM, further on each time (~40 KB a batch).
    assert all(len(segments) == 1 and segments[0][1] <= TRIM for segments in kept), kept
    numbers = [int(segments[0][0].split(".")[1]) for segments in kept]
    assert all(b - a >= 8 for a, b in zip([0, *numbers], numbers, strict=False)), numbers
    left_alone(host, tmux, "main:0.0", folders)
