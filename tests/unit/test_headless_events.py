"""Events of a watched log (what `sgwatch events` and `sgwatch wait` print), from a
Watch fed the bytes a session would feed it."""

import json
import math
from importlib.resources import files
from pathlib import Path

from sgwatch.live.linkstate import CONNECTING, LIVE, WAITING, stale
from sgwatch.live.records import Throttle, Tracker, to_json, to_line
from sgwatch.live.watch import Watch

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sglang"
SAMPLE = files("sgwatch.samples").joinpath("qwen27b-tp2-warmup.log").read_bytes()
NOW = "2026-01-05T10:00:00.000+00:00"


def emitted(t: Tracker) -> list[dict]:
    return [c.event for c in t.changes()]


def tracker(watch: Watch, hold_crash: bool = False) -> Tracker:
    """hold_crash: a vague crash line waits for its exception line (forever, here)."""
    return Tracker(watch, now=lambda: NOW, crash_hold_s=math.inf if hold_crash else 0.0)


def following(hold_crash: bool = False) -> tuple[Watch, Tracker]:
    """A Watch whose log is followed live, past its backlog, and its tracker."""
    watch = Watch("ct129")
    t = tracker(watch, hold_crash)
    watch.link, watch.caught_up = LIVE, True
    return watch, t


def live(data: bytes, hold_crash: bool = False) -> tuple[Watch, list[dict]]:
    """A session that was already following when the log was written, line by line."""
    watch, t = following(hold_crash)
    out = emitted(t)
    for line in data.splitlines(keepends=True):
        watch.feed(line)
        out += emitted(t)
    return watch, out


def kinds(events: list[dict], name: str, key: str) -> list:
    return [e[key] for e in events if e["event"] == name]


def test_a_warmup_followed_live_is_each_phase_in_order_then_ready():
    _, events = live(SAMPLE)
    # Live, the state is what was known then: when every capture so far has ended
    # the server looks warmed up, until the next bar (here: piecewise) begins.
    assert kinds(events, "phase", "state") == [
        "starting",
        "loading_weights",
        "allocating_kv_cache",
        "capturing_graphs",
        "warming_up",
        "capturing_graphs",
        "compiling",
        "capturing_graphs",
        "warming_up",
        "ready",
        "serving",
    ]
    (ready,) = [e for e in events if e["event"] == "ready"]
    assert (ready["ready_at"], ready["warmup_seconds"]) == ("2026-11-30T09:16:26", 144.0)
    steps = [(e["kind"], e["done"], e["total"]) for e in events if e["event"] == "progress"]
    assert ("weights", 12, 12) in steps and ("piecewise", 50, 50) in steps
    # Frames of one bar only move forward, and a repeated frame is not a new step.
    decode = [s for s in steps if s[0] == "decode"]
    assert decode == sorted(set(decode))
    assert kinds(events, "throughput", "samples") == [1, 2, 3, 4, 5]
    assert all(e["host"] == "ct129" and e["time"] == NOW for e in events)


def test_a_progress_step_that_ends_a_phase_comes_before_the_next_phase():
    _, events = live(SAMPLE)
    names = [(e["event"], e.get("state") or e.get("kind")) for e in events]
    last_weights = max(i for i, n in enumerate(names) if n == ("progress", "weights"))
    assert names.index(("phase", "allocating_kv_cache")) > last_weights


def test_the_past_of_a_log_is_one_snapshot_once_caught_up():
    watch = Watch("ct129")
    t = tracker(watch)
    watch.link = LIVE
    watch.feed(SAMPLE)
    before = emitted(t)  # still reading the backlog: only the link so far
    assert [(e["event"], e["state"]) for e in before] == [("link", "connecting"), ("link", "live")]
    watch.caught_up = True
    events = emitted(t)
    assert [e["event"] for e in events] == ["phase", "throughput", "ready"]
    assert (events[0]["state"], events[0]["previous"]) == ("serving", None)
    assert emitted(t) == []


def test_a_crash_then_a_new_run_in_the_same_log():
    _, events = live((FIXTURES / "restart_after_crash.log").read_bytes(), hold_crash=True)
    (crash,) = [e for e in events if e["event"] == "crash"]
    assert crash["summary"].startswith("RuntimeError: Not enough memory.")
    assert (crash["phase"], crash["ts"]) == ("allocating_kv_cache", "2026-01-05T10:00:21")
    phases = [(e["state"], e["new_run"]) for e in events if e["event"] == "phase"]
    restart = phases.index(("crashed", False)) + 1
    assert phases[restart] == ("starting", True)
    assert phases[-1][0] == "loading_weights"  # where the log ends


def vague_crash() -> tuple[bytes, bytes]:
    """An out-of-memory crash log cut after its vague line: up to it, and the rest."""
    lines = (FIXTURES / "crash_not_enough_memory.log").read_bytes().splitlines(keepends=True)
    header = next(i for i, line in enumerate(lines) if b"Scheduler hit an exception" in line)
    return b"".join(lines[: header + 1]), b"".join(lines[header + 1 :])


def test_a_vague_crash_line_is_held_until_its_exception_line():
    watch, t = following(hold_crash=True)
    vague, rest = vague_crash()
    watch.feed(vague)
    held = emitted(t)
    assert "crash" not in [e["event"] for e in held] and watch.state.state == "crashed"
    watch.feed(rest)
    (crash,) = [e for e in emitted(t) if e["event"] == "crash"]
    assert crash["summary"].startswith("RuntimeError: Not enough memory.")


def test_link_changes_say_why_and_a_reconnect_says_so():
    watch = Watch("ct129")
    t = tracker(watch)
    seen = []
    for link, note in [
        (CONNECTING, ""),
        (WAITING, "/srv/server.log: no such file; waiting for it"),
        (LIVE, ""),
        (stale("connection lost"), ""),
        (LIVE, ""),
    ]:
        watch.link, watch.note = link, note or watch.note
        seen += emitted(t)
    assert [(e["state"], e["reason"], e["reconnected"]) for e in seen] == [
        ("connecting", None, False),
        ("waiting", "/srv/server.log: no such file; waiting for it", False),
        ("live", None, False),
        ("stale", "connection lost", False),
        ("live", None, True),
    ]


def test_gpu_samples_are_one_event_per_card_and_sample():
    watch = Watch("ct129")
    t = tracker(watch)
    emitted(t)
    watch.feed_gpu(b"0, NVIDIA H100, 97, 70000, 81559, 612.5, 63\n1, NVIDIA H100, 95, 70100, ")
    (gpu,) = emitted(t)
    assert gpu == {
        "event": "gpu",
        "host": "ct129",
        "time": NOW,
        "index": 0,
        "name": "NVIDIA H100",
        "util_pct": 97,
        "mem_used_mib": 70000,
        "mem_total_mib": 81559,
        "power_w": 612.5,
        "temp_c": 63,
    }
    watch.feed_gpu(b"81559, 600.0, 61\n")
    assert [e["index"] for e in emitted(t)] == [1]


def test_plain_lines_and_json():
    base = {"host": "ct129", "time": "2026-01-05T10:00:07.120+00:00"}
    link = {"reason": None, "source": None, "reconnected": False}
    lines = [
        to_line({**base, "event": "phase", "state": "capturing_graphs", "previous": None}),
        to_line({**base, "event": "progress", "kind": "decode", "done": 3, "total": 36,
                 "current": 64}),
        to_line({**base, "event": "progress", "kind": "weights", "done": 1, "total": None,
                 "current": None}),
        to_line({**base, "event": "progress", "kind": "compile", "done": 20, "total": 50,
                 "current": 512, "rate": 1.25, "eta_s": 24.0}),
        to_line({**base, "event": "ready", "ready_at": None, "warmup_seconds": 93.25}),
        to_line({**base, "event": "crash", "phase": "loading_weights", "summary": "OOM"}),
        to_line({**base, **link, "event": "link", "state": "stale", "reason": "lost"}),
        to_line({**base, **link, "event": "link", "state": "live", "source": "ct129:/s.log",
                 "reconnected": True}),
        to_line({**base, "event": "timeout", "seconds": 30.0, "until": "ready",
                 "state": "compiling"}),
    ]  # fmt: skip
    assert lines == [
        "10:00:07 ct129 phase capturing_graphs",
        "10:00:07 ct129 decode 3/36 (64)",
        "10:00:07 ct129 weights 1/?",
        "10:00:07 ct129 compile 20/50 (512), 1.25/s, ETA 24 s",
        "10:00:07 ct129 READY after 93.2 s",
        "10:00:07 ct129 CRASHED during loading_weights: OOM",
        "10:00:07 ct129 stale: lost",
        "10:00:07 ct129 reconnected: ct129:/s.log",
        "10:00:07 ct129 timed out after 30 s waiting for ready (state: compiling)",
    ]
    assert to_line({**base, "event": "gpu", "index": 0}) is None  # `wait` prints no samples
    event = {**base, "event": "note", "text": "2 servers on ct129: following pid 7 — é"}
    assert "\n" not in to_json(event) and json.loads(to_json(event)) == event


def test_progress_events_carry_the_recent_rate_and_the_time_left():
    _, events = live(SAMPLE)
    compile_steps = [e for e in events if e["event"] == "progress" and e["kind"] == "compile"]
    assert compile_steps
    late = [e for e in compile_steps if e["done"] >= 5 and e["done"] < e["total"]]
    assert late and all(e["rate"] > 0 and e["eta_s"] is not None for e in late)
    assert compile_steps[-1]["eta_s"] is None  # the bar is done: nothing left


def log_clock(watch: Watch):
    """Seconds of log time: a session following the log as it is written."""
    from datetime import datetime

    def now() -> float:
        ts = watch.state.now_ts
        return datetime.fromisoformat(ts).timestamp() if ts else 0.0

    return now


def test_the_whole_seed_warmup_reads_in_under_40_lines_at_one_progress_line_per_10_s():
    watch, t = following()
    passes = Throttle(10.0, clock=log_clock(watch))
    printed = [line for e in emitted(t) if passes(e) and (line := to_line(e))]
    for line in SAMPLE.splitlines(keepends=True):
        watch.feed(line)
        printed += [line for e in emitted(t) if passes(e) and (line := to_line(e))]
    every_step = sum(1 for e in live(SAMPLE)[1] if e["event"] == "progress")
    assert every_step > 100
    assert len(printed) < 40, "\n".join(printed)
    # Every phase is still a line, and the outcome.
    assert sum(" phase " in line for line in printed) == 11
    assert printed[-2].endswith("READY after 144.0 s")
    assert any("ETA" in line for line in printed)


def test_the_throttle_lets_one_progress_event_through_per_interval():
    now = [0.0]
    passes = Throttle(10.0, clock=lambda: now[0])
    progress, phase = {"event": "progress"}, {"event": "phase"}
    seen = []
    for second in range(0, 31):
        now[0] = float(second)
        seen += [second] if passes(progress) else []
        assert passes(phase)
    assert seen == [0, 10, 20, 30]
