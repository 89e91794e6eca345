"""How `wait` and `events` end: decided once, from the transition each event reports."""

import pytest

from sgwatch.live import follow
from sgwatch.live.linkstate import ENDED, FAILED, LIVE, NO_SERVER, WAITING, stale
from sgwatch.live.records import Tracker
from sgwatch.live.transition import LINK, Transition
from tests.unit.test_headless_events import SAMPLE, following, vague_crash


def decided(t: Tracker, until: str | None) -> list[tuple[str, str]]:
    """(event kind, outcome) for each event that decides how following ends."""
    return [
        (c.event["event"], o)
        for c in t.changes()
        if c.cause is not None and (o := follow.outcome(c.cause, until)) is not None
    ]


def fed(until: str | None) -> list[tuple[str, str]]:
    watch, t = following()
    out = decided(t, until)
    for line in SAMPLE.splitlines(keepends=True):
        watch.feed(line)
        out += decided(t, until)
    return out


def test_ready_is_decided_by_the_ready_line_and_serving_by_its_phase():
    assert fed("ready") == [("ready", follow.READY), ("phase", follow.READY)]
    assert fed("serving") == [("phase", follow.READY)]
    assert fed(None) == []  # events follows on until the stream ends


@pytest.mark.parametrize(
    ("link", "until", "outcome"),
    [
        (FAILED, "ready", follow.UNREACHABLE),
        (FAILED, None, follow.UNREACHABLE),
        (ENDED, "ready", follow.UNREACHABLE),
        (ENDED, None, follow.READY),
        (LIVE, "ready", None),
        (WAITING, "ready", None),
        (NO_SERVER, None, None),
        (stale("connection lost"), "ready", None),
    ],
)
def test_the_link_decides_only_when_it_failed_or_ended(link, until, outcome):
    assert follow.outcome(Transition(LINK, link=link), until) == outcome


def test_a_held_crash_decides_when_it_is_reported_not_before():
    watch, t = following(hold_crash=True)
    vague, rest = vague_crash()
    watch.feed(vague)
    assert decided(t, "ready") == [] and watch.state.state == "crashed"
    watch.feed(rest)
    assert decided(t, "ready") == [("crash", follow.CRASHED)]


def test_the_link_reads_as_before():
    assert [str(s) for s in (LIVE, stale("connection lost"), NO_SERVER, FAILED)] == [
        "live",
        "stale: connection lost",
        "no server",
        "failed",
    ]
