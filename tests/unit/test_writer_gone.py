"""A log whose server is gone (no running server writes it) and that did not crash: once
its past is read, a run that was ready or serving is over where the log ends (stopped,
no crash), one still warming up died without a word (a crash, as a followed server's
silent exit is); wait's outcome for the first is ENDED (exit 4), not READY."""

from __future__ import annotations

from sgwatch.cli import exitcodes
from sgwatch.cli.wait_events import _STATUS
from sgwatch.live import follow
from sgwatch.live.transition import PHASE, READY
from sgwatch.live.watch import Watch

SERVING = (
    b"[2026-01-10 08:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
    b"[2026-01-10 08:00:40] The server is fired up and ready to roll!\n"
    b"[2026-01-10 08:03:12 TP0] Decode batch, #running-req: 1, #token: 90, token usage: 0.00,"
    b" cuda graph: True, gen throughput (token/s): 101.20, #queue-req: 0,\n"
)
LOADING = (
    b"[2026-01-10 08:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
    b"[2026-01-10 08:00:01 TP0] Load weight begin. avail mem=78.00 GB\n"
)


def caught_up(data: bytes, gone: bool) -> tuple[Watch, list]:
    w = Watch("ct129")
    w.writer_gone = gone
    seen: list = []
    w.subscribe(seen.append)
    w.feed(data)
    w.caught_up = True
    return w, seen


def test_a_gone_servers_log_that_ends_serving_reads_stopped_and_wait_ends_with_4():
    w, seen = caught_up(SERVING, gone=True)
    s = w.state
    assert s.state == "stopped" and s.crash is None
    assert s.ended == "its log ends serving at 08:03:12, no crash"
    assert w.note == "server gone; its log ends serving at 08:03:12, no crash"
    assert "[sgwatch] server gone; its log ends serving at 08:03:12, no crash" in w.take_lines()[0]
    assert READY not in [t.kind for t in seen]  # its ready line is a gone server's past
    [stopped] = [t for t in seen if t.kind == PHASE]
    assert stopped.value == "stopped" and follow.outcome(stopped, "ready") == follow.ENDED
    assert _STATUS[follow.ENDED] == exitcodes.NO_SERVER


def test_the_same_log_with_its_server_running_is_serving_as_before():
    w, seen = caught_up(SERVING, gone=False)
    assert (w.state.state, w.state.ended) == ("serving", None)
    ready = next(t for t in seen if t.kind == READY)
    assert follow.outcome(ready, "ready") == follow.READY


def test_a_gone_servers_log_that_ends_in_its_warmup_is_a_crash_there():
    w, _ = caught_up(LOADING, gone=True)
    c = w.state.crash
    assert w.state.state == "crashed" and c is not None
    assert c.phase == "loading_weights"
    assert c.summary.startswith("server gone; its log ends loading weights at 08:00:01")


def test_a_new_file_in_the_log_is_a_server_writing_it_again():
    w = Watch("ct129")
    w.writer_gone = True
    w.new_file("replaced")
    assert not w.writer_gone
