"""`wait --quiet --every S`'s status line (cli/heartbeat.py), from a Watch fed the sample
warmup a line at a time, as a session feeds it."""

import asyncio
from importlib.resources import files

from sgwatch.cli.heartbeat import status_line
from sgwatch.cli.wait_events import _beating
from sgwatch.live.linkstate import CONNECTING, LIVE, stale
from sgwatch.live.watch import Watch

SAMPLE = files("sgwatch.samples").joinpath("qwen27b-tp2-warmup.log").read_bytes()
NOW = "2026-01-05T10:00:07.000+00:00"


def lines_through_the_warmup() -> list[str]:
    watch = Watch("ct129")
    watch.link, watch.caught_up = LIVE, True
    said = []
    for line in SAMPLE.splitlines(keepends=True):
        watch.feed(line)
        said.append(status_line(watch, NOW))
    return said


def test_the_phase_and_the_capture_with_its_time_left():
    said = lines_through_the_warmup()
    assert all(line.startswith("10:00:07 ct129 ") and len(line) < 80 for line in said)
    assert any(line.startswith("10:00:07 ct129 loading_weights, weights ") for line in said)
    capturing = [line for line in said if "capturing_graphs, decode " in line]
    assert capturing and any(", ETA " in line for line in capturing)
    assert said[-1] in ("10:00:07 ct129 ready", "10:00:07 ct129 serving")


def test_before_the_past_is_read_the_link_and_a_drop_with_its_cause():
    watch = Watch("ct129")
    watch.link = CONNECTING
    assert status_line(watch, NOW) == "10:00:07 ct129 connecting"
    watch.link, watch.caught_up = LIVE, True
    watch.feed(SAMPLE)
    watch.link = stale("connection lost")
    assert status_line(watch, NOW).endswith(", stale: connection lost")


def test_the_outcome_stays_the_last_line_while_the_session_stops_after_it(capsys):
    """`follow` says the outcome, then stops its session (seconds, over a slow link): the
    status lines end with the outcome, not after it."""

    async def follow(emit) -> str:
        await asyncio.sleep(0.1)  # the warmup: status lines every 0.01 s meanwhile
        emit("OUTCOME")
        await asyncio.sleep(0.1)  # the session stopping: ten more beats were said here
        return "ready"

    watch = Watch("ct129")
    watch.link, watch.caught_up = LIVE, True
    assert asyncio.run(_beating(follow, watch, 0.01, lambda e: print(e, flush=True))) == "ready"
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "OUTCOME"
    assert len(lines) >= 3 and all(" ct129 " in line for line in lines[:-1])
