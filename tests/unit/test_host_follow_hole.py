"""A log copied and truncated (copytruncate) under a writer that does not append starts
with a hole as long as the old log: the host's follower (host/follow.py) skips it and the
NUL bytes after it, says where the content starts, and sends the new run's bytes alone.

The follower runs here as on a host; its frames are collected instead of written."""

from __future__ import annotations

import os
import shutil

import pytest

from sgwatch.remote.host import follow

RUN_A = b"".join(b"[2026-11-30 10:00:%02d] run A, line %06d\n" % (i % 60, i) for i in range(60_000))
RUN_B = b"[2026-11-30 11:00:00] run B, its first line\n[2026-11-30 11:00:01] run B, line 2\n"


@pytest.fixture
def frames(monkeypatch) -> list[tuple[str, object]]:
    sent: list[tuple[str, object]] = []
    monkeypatch.setattr(follow, "emit", lambda kind, data: sent.append((kind.decode(), data)))
    monkeypatch.setattr(follow, "event", lambda **e: sent.append((e.pop("kind"), e)))
    return sent


def sent_after_reopen(frames: list[tuple[str, object]]) -> list[tuple[str, object]]:
    last = max(i for i, (kind, e) in enumerate(frames) if kind == "open")
    return frames[last:]


def followed_then_rotated(tmp_path) -> tuple[int, follow.Follower]:
    """Run A written through a shell's `>` and followed; then logrotate's copytruncate,
    the writer (no O_APPEND) still at its offset."""
    log = tmp_path / "server.log"
    writer = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.write(writer, RUN_A)
    follower = follow.Follower(str(log), 0, "-", 0, "-")
    follower.step()
    shutil.copyfile(log, f"{log}.1")
    os.truncate(log, 0)
    return writer, follower


def test_the_new_run_is_sent_without_the_hole_the_old_one_left(tmp_path, frames):
    writer, follower = followed_then_rotated(tmp_path)
    assert not [f for f in frames if f[0] == "hole"]  # a log with no hole: read whole
    os.write(writer, RUN_B)  # at the old offset: the file is a hole, then run B
    follower.step()
    after = sent_after_reopen(frames)
    assert after[0] == ("open", {"reason": "truncated", "ident": follower.ident,
                                 "offset": 0, "size": len(RUN_A) + len(RUN_B)})  # fmt: skip
    assert after[1] == ("hole", {"offset": len(RUN_A)})
    assert b"".join(d for kind, d in after if kind == "D") == RUN_B
    assert follower.pos == len(RUN_A) + len(RUN_B)


def test_a_long_new_run_after_the_hole_sends_its_tail_first(tmp_path, frames):
    writer, follower = followed_then_rotated(tmp_path)
    run_b = RUN_B + RUN_A.replace(b"run A", b"run B")  # longer than two tails
    os.write(writer, run_b)
    follower.step()
    kinds = [kind for kind, _ in sent_after_reopen(frames)]
    assert kinds[:3] == ["open", "hole", "T"]
    tail = next(d for kind, d in sent_after_reopen(frames) if kind == "T")
    assert int.from_bytes(tail[:8], "big") > len(RUN_A) and run_b.endswith(tail[8:])
    assert b"".join(d for kind, d in sent_after_reopen(frames) if kind == "D") == run_b


def test_seen_empty_then_written_past_the_hole(tmp_path, frames):
    writer, follower = followed_then_rotated(tmp_path)
    follower.step()  # the follower looks before the writer writes again
    assert sent_after_reopen(frames) == [
        ("open", {"reason": "truncated", "ident": follower.ident, "offset": 0, "size": 0})
    ]
    os.write(writer, RUN_B)
    follower.step()
    after = sent_after_reopen(frames)
    assert after[1] == ("hole", {"offset": len(RUN_A)})
    assert b"".join(d for kind, d in after if kind == "D") == RUN_B
    assert not follower.truncated()  # the head it keeps is the file's: NUL bytes
