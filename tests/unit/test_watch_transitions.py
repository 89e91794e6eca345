"""The Watch decides each transition once and publishes it to every subscriber."""

from importlib.resources import files
from pathlib import Path

from sgwatch.live.linkstate import LIVE, stale
from sgwatch.live.transition import CRASHED, LINK, NEW_RUN, PHASE, READY
from sgwatch.live.watch import Watch

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sglang"
SAMPLE = files("sgwatch.samples").joinpath("qwen27b-tp2-warmup.log").read_bytes()


def recorded(watch: Watch) -> list:
    seen = []
    watch.subscribe(seen.append)
    return seen


def feed_lines(watch: Watch, data: bytes) -> None:
    for line in data.splitlines(keepends=True):
        watch.feed(line)


def test_each_subscriber_sees_each_transition_once_in_order():
    watch = Watch("ct129")
    first, second = recorded(watch), recorded(watch)
    watch.caught_up = True
    feed_lines(watch, SAMPLE)
    kinds = [(t.kind, t.value) for t in first if t.kind != LINK]
    assert kinds.count((READY, "ready")) == 1
    assert [v for k, v in kinds if k == PHASE][-2:] == ["ready", "serving"]
    assert not any(k == NEW_RUN for k, _ in kinds)
    assert [(t.kind, t.value) for t in second] == [(t.kind, t.value) for t in first]


def test_a_crash_and_the_run_after_it_in_the_same_log():
    watch = Watch("ct129")
    seen = recorded(watch)
    watch.caught_up = True
    feed_lines(watch, (FIXTURES / "restart_after_crash.log").read_bytes())
    kinds = [t.kind for t in seen if t.kind != LINK]
    assert kinds.count(CRASHED) == 1 and kinds.count(NEW_RUN) == 1
    assert kinds.index(CRASHED) < kinds.index(NEW_RUN)
    new_run = next(t for t in seen if t.kind == NEW_RUN)
    assert new_run.previous == "crashed"


def test_a_new_log_file_is_a_new_run():
    watch = Watch("ct129")
    watch.caught_up = True
    watch.feed(SAMPLE)
    seen = recorded(watch)
    watch.new_file("replaced")
    watch.feed(SAMPLE[:2000])
    assert [t.kind for t in seen if not t.past][:2] == [NEW_RUN, PHASE]


def test_the_past_is_published_once_as_past_and_a_late_subscriber_gets_it_too():
    watch = Watch("ct129")
    early = recorded(watch)
    watch.feed(SAMPLE)  # the backlog: nothing is decided while it is read
    assert [t.kind for t in early] == [LINK]
    watch.caught_up = True
    assert [(t.kind, t.value, t.past) for t in early[1:]] == [
        (PHASE, "serving", True),
        (READY, "serving", True),
    ]
    late = recorded(watch)
    assert [(t.kind, t.past) for t in late] == [(LINK, True), (PHASE, True), (READY, True)]


def test_every_link_change_is_published_however_short():
    watch = Watch("ct129")
    seen = recorded(watch)
    for link in (LIVE, stale("connection lost"), LIVE, stale("connection lost"), LIVE):
        watch.link = link
    watch.link = LIVE  # no change: nothing to publish
    assert [str(t.link) for t in seen if t.kind == LINK] == [
        "connecting",
        "live",
        "stale: connection lost",
        "live",
        "stale: connection lost",
        "live",
    ]


def test_unsubscribe_stops_the_calls():
    watch = Watch("ct129")
    seen = []
    unsubscribe = watch.subscribe(seen.append)
    unsubscribe()
    unsubscribe()  # twice is harmless (an app and its controller both let go)
    watch.link = LIVE
    assert [t.kind for t in seen] == [LINK]
