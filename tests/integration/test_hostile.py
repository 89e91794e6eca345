"""Hostile log content streamed end to end leaves the lines after it intact."""

from __future__ import annotations

from contextlib import aclosing
from pathlib import Path

from sgwatch.remote.logfollow import LogData, LogFollower
from tests.integration.helpers import Parsed, arun

NORMAL = [f"[2026-11-30 10:00:{i % 60:02d}] after the storm {i}" for i in range(1000)]
HOSTILE = b"".join(
    [
        b"[2026-11-30 09:59:59] \x1b[31mred\x1b[0m \x1b[2J\x1b[H cleared?\n",
        b"\x1b]0;pwned title\x07\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\\n",
        b"bad utf-8: \xff\xfe\xc3\x28 \xed\xa0\x80 end\n",
        b"nul \x00 bell \x07 backspace \x08 del \x7f c1 \xc2\x9b31m\n",
        b"L" * (10 * 1024 * 1024) + b"\n",  # one 10 MB line
        "".join(f"{line}\n" for line in NORMAL).encode(),
    ]
)


async def stream_over_ssh(link, log: Path) -> tuple[Parsed, bytes]:
    parsed, raw = Parsed(), bytearray()
    async with aclosing(LogFollower(link, str(log)).events()) as events:
        async for ev in events:
            if isinstance(ev, LogData):
                raw += ev.data
                parsed.feed(ev.data)
                if ev.offset == len(HOSTILE):
                    break
    await link.close()
    return parsed, bytes(raw)


def test_hostile_content_streams_without_damage_to_later_lines(host, link, tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_bytes(HOSTILE)
    parsed, raw = arun(stream_over_ssh(link(), log), timeout=60)
    assert raw == HOSTILE  # byte for byte through SSH
    assert parsed.lines[-len(NORMAL) :] == NORMAL
    assert not any(ch in line for line in parsed.lines for ch in "\x1b\x00\x07\x08\x9b")
    assert max(len(line) for line in parsed.lines) < 100_000  # the 10 MB line was capped


def test_the_lines_are_those_of_a_local_read(host, link, tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_bytes(HOSTILE)
    parsed, _ = arun(stream_over_ssh(link(), log), timeout=60)
    local = Parsed()
    local.feed(HOSTILE)
    assert parsed.lines == local.lines  # however the stream was chunked
