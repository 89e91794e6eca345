"""A state and a span of time read the same in the dashboard, `replay` and `wait`."""

import io
from importlib.resources import files

import pytest

from sgwatch.cli.replay import read_log, render_timeline
from sgwatch.core import events as ev
from sgwatch.core.display import BADGES, badge, duration, duration_tenths, eta
from sgwatch.live.linkstate import LIVE
from sgwatch.live.records import to_line
from sgwatch.ui.badges import badge as header_badge

SAMPLE = (files("sgwatch.samples") / "qwen27b-tp2-warmup.log").read_bytes()


def test_every_state_has_a_symbol_and_a_word():
    states = [*ev.PHASE_RANK, ev.READY, ev.SERVING, ev.CRASHED, ev.STOPPED]
    assert sorted(BADGES) == sorted(states)
    assert len({b.symbol for b in BADGES.values()}) == len(BADGES)
    assert (str(badge(ev.CAPTURING_GRAPHS)), badge(ev.READY).tone) == ("◆ CAPTURING", "good")
    assert str(badge("draining")) == "? DRAINING"


@pytest.mark.parametrize(
    ("seconds", "short", "tenths", "wait_eta"),
    [
        (0.4, "0s", "0.4 s", "0 s"),
        (22.0, "22s", "22.0 s", "22 s"),
        (75.0, "1m15s", "1m15.0s", "75 s"),
        (144.0, "2m24s", "2m24.0s", "2m24s"),
        (3725.0, "1h02m", "62m05.0s", "62m05s"),
    ],
)
def test_the_three_spans(seconds, short, tenths, wait_eta):
    assert (duration(seconds), duration_tenths(seconds), eta(seconds)) == (short, tenths, wait_eta)


def test_an_unknown_span():
    assert (duration(None), duration_tenths(None)) == ("", "?")


def test_replay_and_the_dashboard_show_one_badge_mid_warmup():
    cut = SAMPLE[: SAMPLE.index(b"Capturing batches")]
    summary = read_log(io.BytesIO(cut))
    assert summary.state == ev.CAPTURING_GRAPHS
    state_line = render_timeline(summary, "cut.log").splitlines()[1]
    assert state_line == f"state: {header_badge(ev.CAPTURING_GRAPHS, LIVE)[0]}"
    assert state_line == "state: ◆ CAPTURING"


def test_wait_lines_take_the_badges_words():
    base = {"host": "h", "time": "2026-11-30T10:00:07.000+00:00"}
    ready = to_line({**base, "event": "ready", "ready_at": None, "warmup_seconds": 9.0})
    crash = to_line({**base, "event": "crash", "phase": "compiling", "summary": "OOM"})
    assert ready == f"10:00:07 h {badge(ev.READY).word} after 9.0 s"
    assert crash == f"10:00:07 h {badge(ev.CRASHED).word} during compiling: OOM"
