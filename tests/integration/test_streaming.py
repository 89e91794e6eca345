"""A log followed over SSH arrives as written: promptly, whole, in order."""

from __future__ import annotations

import asyncio
import threading
from contextlib import aclosing
from pathlib import Path

from sgwatch.core.linesplit import LineSplitter
from sgwatch.remote.logfollow import LogData, LogFollower, LogOpened
from tests.integration.helpers import Parsed, arun

BURST = 200_000


def numbered(i: int) -> bytes:
    """An ~89-byte SGLang-shaped line carrying its own sequence number."""
    stamp = f"2026-11-30 10:{i // 6000 % 60:02d}:{i // 100 % 60:02d}"
    return f"[{stamp}] line {i:07d} {'x' * 50}\n".encode()


async def data_until(events, got: bytearray, marker: bytes) -> None:
    while marker not in got:
        ev = await anext(events)
        if isinstance(ev, LogData):
            got += ev.data


def test_tqdm_frames_arrive_before_their_newline(host, link, tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_bytes(b"[2026-11-30 10:00:00 TP0] Capture cuda graph begin.\n")
    frames = [
        f"\rCapturing batches (bs={k}): {k * 10:3d}%|{'#' * k:<10}| {k}/10".encode()
        for k in range(1, 11)
    ]

    async def body() -> bytearray:
        got = bytearray()
        the_link = link()
        async with aclosing(LogFollower(the_link, str(log)).events()) as events:
            await data_until(events, got, b"begin.\n")
            for frame in frames:
                with log.open("ab") as f:
                    f.write(frame)
                await data_until(events, got, frame)  # no newline written yet
        await the_link.close()
        return got

    got = arun(body(), timeout=30)
    assert b"\n" not in got.split(b"begin.\n", 1)[1]
    lines = LineSplitter().feed(bytes(got))
    # Each frame is a line as soon as the next frame's \r arrives.
    assert [ln for ln in lines if ln.startswith("Capturing")] == [
        f.decode()[1:] for f in frames[:-1]
    ]


def test_a_200k_line_burst_arrives_complete_and_in_order(host, link, tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_bytes(b"")
    expected = b"".join(numbered(i) for i in range(BURST))

    def write() -> None:
        with log.open("ab") as f:
            for start in range(0, len(expected), 2000 * 89):
                f.write(expected[start : start + 2000 * 89])
                f.flush()

    async def body() -> Parsed:
        parsed = Parsed()
        the_link = link()
        async with aclosing(LogFollower(the_link, str(log)).events()) as events:
            async for ev in events:
                if isinstance(ev, LogOpened):
                    writer = threading.Thread(target=write)
                    writer.start()
                elif isinstance(ev, LogData):
                    parsed.feed(ev.data)
                    if ev.offset == len(expected):
                        break
        writer.join()
        await the_link.close()
        return parsed

    parsed = arun(body(), timeout=60)
    assert parsed.lines == expected.decode().splitlines()


def test_a_missing_log_is_reported_then_followed_once_it_appears(host, link, tmp_path: Path):
    log = tmp_path / "later.log"

    async def body() -> list:
        seen = []
        the_link = link()
        async with aclosing(LogFollower(the_link, str(log)).events()) as events:
            async for ev in events:
                seen.append(ev)
                if len(seen) == 1:
                    await asyncio.to_thread(log.write_bytes, b"hello\n")
                if isinstance(ev, LogData):
                    break
        await the_link.close()
        return seen

    missing, opened, data = arun(body(), timeout=30)
    assert "No such file" in missing.error
    assert (opened.reason, opened.new_run, data.data) == ("start", False, b"hello\n")
