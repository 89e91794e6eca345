"""A log truncated and written past the old offset again while the host's follower reads
it (host/follow.py; a copytruncate, then a fast writer): each run's bytes reach the
client under their own run, whole, never the new run's as the old one's continuation.

The follower runs here as on a host; its frames are collected instead of written to
stdout, and the writer acts at the instant the race needs (between two reads)."""

from __future__ import annotations

import os

import pytest

from sgwatch.remote.host import follow

RUN_A = b"[2026-11-30 10:00:00] run A, line 1\n[2026-11-30 10:00:01] run A, line 2\n"
RUN_B = b"[2026-11-30 11:00:00] run B, longer than run A\n" * 4  # regrows past A's end


def runs(frames: list[tuple[str, object]]) -> list[tuple[str, bytes]]:
    """(reason it was opened, bytes sent) per run, as the client would split them."""
    out: list[tuple[str, bytes]] = []
    for kind, payload in frames:
        if kind == "open":
            out.append((payload, b""))
        elif kind == "D":
            out[-1] = (out[-1][0], out[-1][1] + payload)
    return out


@pytest.fixture
def frames(monkeypatch) -> list[tuple[str, object]]:
    sent: list[tuple[str, object]] = []
    monkeypatch.setattr(follow, "emit", lambda kind, data: sent.append((kind.decode(), data)))
    monkeypatch.setattr(follow, "event", lambda **e: sent.append((e["kind"], e.get("reason"))))
    return sent


def test_rewritten_after_run_a_was_sent_is_a_new_run_read_from_its_start(
    tmp_path, frames, monkeypatch
):
    log = tmp_path / "server.log"
    log.write_bytes(RUN_A)
    send = follow.emit

    def emit(kind: bytes, data: bytes) -> None:
        send(kind, data)
        if data == RUN_A:  # the client has run A: `> server.log`, and run B comes fast
            log.write_bytes(RUN_B)

    monkeypatch.setattr(follow, "emit", emit)
    follower = follow.Follower(str(log), 0, "-", 0, "-")
    follower.step()
    follower.step()
    assert runs(frames) == [("start", RUN_A), ("truncated", RUN_B)]


def test_rewritten_just_after_a_read_still_sends_what_was_read_as_the_old_run(
    tmp_path, frames, monkeypatch
):
    log = tmp_path / "server.log"
    log.write_bytes(RUN_A)
    follower = follow.Follower(str(log), 0, "-", 0, "-")
    follower.step()
    last = b"[2026-11-30 10:00:02] run A, its last line\n"
    with log.open("ab") as f:
        f.write(last)
    read = os.read

    def read_then_rewrite(fd: int, n: int) -> bytes:
        data = read(fd, n)
        if fd == follower.fd and data == last:
            log.write_bytes(RUN_B)  # between the read and the follower's next look
        return data

    monkeypatch.setattr(follow.os, "read", read_then_rewrite)
    follower.step()
    follower.step()
    assert runs(frames) == [("start", RUN_A + last), ("truncated", RUN_B)]
