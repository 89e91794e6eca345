"""`replay`'s timeline: a capture phase row and the captures row agree on how long the
capture took, the state line is the badge, and a crash is marked on the phase it
happened in."""

import io

import pytest

from sgwatch.cli.replay import read_log, render_timeline
from sgwatch.core import events as ev
from sgwatch.core.display import badge


def timeline(*lines: str) -> str:
    return render_timeline(read_log(io.BytesIO(("\n".join(lines) + "\n").encode())), "log")


def row(text: str, name: str) -> str:
    """The timeline row of `name`, without its mark."""
    rows = (line.lstrip("✓…✗ ") for line in text.splitlines())
    return next(r for r in rows if r.startswith(name))


@pytest.mark.parametrize(
    "end",
    [
        "Capture cuda graph end. Time elapsed: 12.15 s",  # 0.4
        "Capture target decode CUDA graph end. elapsed=12.15 s, mem usage=0.27 GB, avail mem=5 GB.",
    ],
)
def test_a_log_that_begins_at_a_capture_end_gives_the_phase_the_capture_length(end):
    text = timeline(
        f"[2026-02-26 02:44:03 TP1] {end}",
        f"[2026-02-26 02:44:03 TP0] {end.replace('12.15', '12.16')}",
        "max_total_num_tokens=481419",
    )
    assert row(text, "capturing_graphs").split()[-2:] == ["12.2", "s"]
    assert "~02:43:50" in row(text, "capturing_graphs")  # its start, from its length
    assert row(text, "decode").split()[-2:] == ["12.2", "s"]


def test_a_capture_whose_begin_is_seen_keeps_its_logged_start():
    text = timeline(
        "[2026-02-26 02:43:40 TP0] KV Cache is allocated. #tokens: 1000, K size: 1 GB",
        "[2026-02-26 02:43:45 TP0] Capture cuda graph begin. avail mem=9.00 GB",
        "[2026-02-26 02:44:03 TP0] Capture cuda graph end. Time elapsed: 12.15 s",
    )
    assert row(text, "capturing_graphs").split()[:3] == ["capturing_graphs", "02:43:45", "→"]
    assert row(text, "allocating_kv_cache").split()[-2:] == ["5.0", "s"]


def test_the_end_line_of_a_capture_begun_before_the_log_moves_the_phase_before_it():
    text = timeline(
        "[2026-02-26 02:43:55 TP0] Registering 123 cuda graph addresses",
        "[2026-02-26 02:43:58 TP0] Load weight end. type=X, avail mem=9 GB, mem usage=1 GB.",
        "[2026-02-26 02:44:03 TP0] Capture cuda graph end. Time elapsed: 12.15 s",
    )
    # The capture cannot have begun before the phase it followed: its start is clamped.
    assert row(text, "capturing_graphs").split()[1] == "~02:43:58"
    assert row(text, "allocating_kv_cache").split()[-2:] == ["0.0", "s"]


@pytest.mark.parametrize(
    ("line", "state"),
    [
        ("Capture cuda graph begin. avail mem=9.00 GB", ev.CAPTURING_GRAPHS),
        ("Load weight begin. avail mem=9.00 GB", ev.LOADING_WEIGHTS),
        ("KV Cache is allocated. #tokens: 1000, K size: 1 GB", ev.ALLOCATING_KV_CACHE),
    ],
)
def test_the_state_line_is_the_badge(line, state):
    text = timeline(f"[2026-02-26 02:43:45 TP0] {line}")
    assert text.splitlines()[1] == f"state: {badge(state)}"
    assert state.upper() not in text


def test_a_crash_while_serving_marks_no_warmup_phase_and_says_when():
    text = timeline(
        "[2026-02-26 02:40:00 TP0] Load weight begin. avail mem=9.00 GB",
        "[2026-02-26 02:41:00 TP0] The server is fired up and ready to roll!",
        "[2026-02-26 02:42:00 TP0] Decode batch, #running-req: 1, #token: 41, token usage: "
        "0.00, cuda graph: True, gen throughput (token/s): 112.58, #queue-req: 0,",
        "[2026-02-26 02:43:07 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
    )
    assert text.splitlines()[1] == f"state: {badge(ev.CRASHED)} at 02:43:07"
    assert "✗" not in next(line for line in text.splitlines() if "loading_weights" in line)
    assert "crash (during serving): RuntimeError: CUDA error" in text
