"""Startup failures of the simulated server: the real error shapes and exit codes."""

import re
import signal

from tests.sim.shapes import records


def test_capture_oom_kills_the_tree_with_status_137(scenarios):
    r = scenarios["oom-capture-0.5"]
    assert r.returncode == -signal.SIGKILL  # a shell reports 137
    s = r.summary
    assert s.state == "crashed" and not s.ready
    assert "Capture cuda graph failed" in s.crash.summary
    assert "CUDA out of memory" in s.crash.summary
    assert (s.crash.exit_code, s.crash.phase) == (137, "capturing_graphs")
    (decode,) = s.graph_captures
    assert decode.kind == "decode" and not decode.ended and decode.done < decode.total
    # The failing rank's traceback header is glued onto rank 0's open bar.
    assert re.search(
        rb"(?:it/s|s/it)\]\[[\d: -]+ TP\d\] Scheduler hit an exception: Traceback", r.log
    )
    assert b"Received sigquit from a child process. It usually means the child failed." in r.log
    assert b"Possible solutions:\n1. set --mem-fraction-static" in r.log
    assert r.state_files == []


def test_new_format_fails_in_the_prefill_graph_first(scenarios):
    r = scenarios["oom-capture-0.5.23"]
    assert r.returncode == -signal.SIGKILL
    s = r.summary
    assert "Capture prefill CUDA graph failed" in s.crash.summary
    assert [c.kind for c in s.graph_captures] == ["prefill"]
    assert re.search(rb"kill_process_tree called: parent_pid=\d+, include_parent=True", r.log)


def test_kv_cache_that_does_not_fit(scenarios):
    r = scenarios["kv-too-small-0.5.23"]
    assert r.returncode == -signal.SIGKILL
    s = r.summary
    assert s.crash.summary.startswith("RuntimeError: Not enough memory.")
    assert "mem_fraction_static=0.4" in s.crash.summary
    assert s.crash.phase == "allocating_kv_cache"


def test_weights_bigger_than_the_card(scenarios):
    r = scenarios["weights-too-big-0.4"]
    assert r.returncode == -signal.SIGKILL
    s = r.summary
    assert s.crash.summary.startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert s.crash.phase == "loading_weights"


def test_language_only_without_encoder_urls(scenarios):
    r = scenarios["language-only"]
    assert r.returncode == 1
    s = r.summary
    assert s.state == "crashed"
    assert s.crash.summary == (
        "ValueError: requires at least one encoder urls to be set via --encoder-urls"
    )
    assert b"server_args=" not in r.log  # fails while resolving the arguments
    assert r.log.startswith(b"Traceback (most recent call last):\n")


def test_ambiguous_flag_in_the_newest_release(scenarios):
    r = scenarios["ambiguous-flag-0.5.23"]
    assert r.returncode == 2
    assert r.log.startswith(b"usage: sglang serve [-h] --model-path MODEL_PATH")
    assert b"sglang serve: error: ambiguous option: --cuda-graph-max-bs could match" in r.log
    assert r.summary.state == "crashed"


def test_tracebacks_are_one_record_then_unprefixed_lines(scenarios):
    texts = [t for prefixed, t in records(scenarios["oom-capture-0.5"].log) if prefixed]
    assert sum("Scheduler hit an exception" in t for t in texts) == 1
    assert not any(t.startswith("  File ") for t in texts)
