"""Each documented SGLang format family, from fixtures written in that format."""

import pytest

from sgwatch.core import events as ev
from sgwatch.core.identity import RunIdentity, Speculative
from sgwatch.core.ratecounts import MEDIAN_ERROR
from sgwatch.engines.sglang.parse import Parser
from tests.conftest import FIXTURES


def captures(summary):
    return [(c.kind, c.done, c.total, c.ended) for c in summary.graph_captures]


def phase_names(summary):
    return [p.name for p in summary.phases]


def test_old_format_0_4_full_start_to_serving(replay_fixture):
    s = replay_fixture("sglang/old_phases_0_4.log")
    assert s.engine == "sglang"
    assert s.state == "serving" and s.ready
    assert phase_names(s) == [
        "starting",
        "loading_weights",
        "allocating_kv_cache",
        "capturing_graphs",
        "warming_up",
    ]
    durations = {p.name: p.seconds for p in s.phases}
    assert durations["loading_weights"] == 24.0  # 10:00:06 -> 10:00:30
    assert durations["capturing_graphs"] == 12.0  # 10:00:31 -> capture end at 10:00:43
    assert captures(s) == [("decode", 4, 4, True)]
    assert s.graph_captures[0].seconds == 12.40
    assert s.warmup_seconds == 48.0
    assert s.kv_cache_tokens == 20480 and s.max_total_num_tokens == 20480
    # "Decode batch." with a trailing ", ": three samples, per line, not summed.
    assert s.throughput.samples == 3
    assert s.throughput.gen_tok_s_last == 90.0
    assert s.throughput.gen_tok_s_max == 100.0
    assert s.throughput.gen_tok_s_median == pytest.approx(90.0, abs=MEDIAN_ERROR + 1e-9)
    assert s.throughput.accept_len_mean is None


def test_new_format_0_5_23_prefill_verify_draft_captures(replay_fixture):
    s = replay_fixture("sglang/new_phases_0_5_23.log")
    assert s.state == "serving"
    assert captures(s) == [
        ("prefill", 4, 4, True),
        ("verify", None, None, True),  # its bs list is printed on the end line only
        ("draft", 5, 5, True),
    ]
    assert [c.seconds for c in s.graph_captures] == [7.81, 10.50, 4.02]
    assert s.weights.seconds == 16.12
    assert s.weights.mem_usage_gb == {"TP0": 15.40}
    assert s.kv_cache_tokens == 300000
    assert s.throughput.samples == 2
    assert s.throughput.accept_len_mean == 3.0
    assert s.warmup_seconds == 49.0


def test_glued_tqdm_frames_and_rank_line(replay_fixture):
    s = replay_fixture("sglang/glued_tqdm_frames.log")
    # The unfinished bar (no newline yet) is still read: 2 of 3 batch sizes.
    assert s.state == "capturing_graphs"
    assert captures(s) == [("decode", 2, 3, False)]
    # The other rank's line glued onto the bar is a line of its own.
    assert s.lines == 3 + 1 + 1 + 3


def test_wrapped_and_variant_prefixes():
    p = Parser()
    lines = (FIXTURES / "sglang/wrapped_prefixes.log").read_text().splitlines()
    events = [p.parse(line) for line in lines]
    ray, ray_ip, ms_ranks, level_source, time_only = events
    assert isinstance(ray, ev.PhaseSeen) and ray.rank == "TP0"
    assert ray.ts == "2025-04-05 03:20:12"
    assert isinstance(ray_ip, ev.PhaseSeen) and ray_ip.phase == ev.LOADING_WEIGHTS
    assert isinstance(ms_ranks, ev.WeightsLoaded)
    assert ms_ranks.rank == "DP1 PP0 TP3 EP3" and ms_ranks.ts == "2025-04-05 03:20:30.125"
    assert ms_ranks.mem_usage_gb == 30.0
    assert level_source is None  # a plain line: prefix and "INFO file:line:" both understood
    assert isinstance(time_only, ev.KvCacheSized) and time_only.ts == "22:30:53"


def test_scheduler_exception_summary_is_the_exception_line(replay_fixture):
    s = replay_fixture("sglang/crash_capture_oom.log")
    assert s.state == "crashed"
    assert s.crash.summary.startswith("Exception: Capture cuda graph failed: CUDA out of memory")
    assert s.crash.exception == "Exception"
    assert s.crash.phase == "capturing_graphs"
    assert s.crash.exit_code == 137  # sigquit -> kill_process_tree SIGKILLs the parent


def test_died_during_initialization_bare_traceback(replay_fixture):
    s = replay_fixture("sglang/crash_died_during_init.log")
    assert s.state == "crashed"
    assert s.crash.summary.startswith("RuntimeError: Rank 1 scheduler died during initialization")
    assert s.crash.phase == "loading_weights"


def test_argparse_error_is_the_summary_with_exit_2(replay_fixture):
    s = replay_fixture("sglang/crash_argparse.log")
    assert s.state == "crashed"
    assert s.crash.summary == (
        "sglang serve: error: unrecognized arguments: --enable-piecewise-cuda-graph"
    )
    assert s.crash.exit_code == 2


def test_not_enough_memory(replay_fixture):
    s = replay_fixture("sglang/crash_not_enough_memory.log")
    assert s.state == "crashed"
    assert "Not enough memory" in s.crash.summary
    assert s.crash.phase == "allocating_kv_cache"


def test_new_args_dump_after_crash_starts_a_new_run(replay_fixture):
    s = replay_fixture("sglang/restart_after_crash.log")
    assert s.runs == 2
    assert s.state == "loading_weights"
    assert s.crash is None
    assert phase_names(s) == ["starting", "loading_weights"]
    assert s.phases[0].started_at == "2026-01-05T10:05:00"


def test_clean_shutdown_is_stopped_not_crashed(replay_fixture):
    s = replay_fixture("sglang/stopped_sigterm.log")
    assert s.state == "stopped" and s.crash is None


def test_health_checks_after_ready_are_not_traffic(replay_fixture):
    s = replay_fixture("sglang/ready_health_checks_only.log")
    assert s.state == "ready"
    assert s.requests == 1  # the warmup generate; health probes are not counted


def test_lines_that_merely_mention_errors_are_not_crashes(replay_fixture):
    s = replay_fixture("sglang/warnings_that_are_not_crashes.log")
    assert s.state == "loading_weights" and s.crash is None


def test_batch_fields_parsed_by_key_in_any_order():
    p = Parser()
    e = p.parse(
        "[2026-04-05 20:02:51] Prefill batch, #new-seq: 1, #new-token: 158, #cached-token: 0, "
        "token usage: 0.08, #running-req: 31, #queue-req: 2, cuda graph: True, "
        "input throughput (token/s): 559.53"
    )
    assert isinstance(e, ev.Batch) and e.kind == "prefill"
    assert [e.number(k) for k in ("#running-req", "#queue-req", "token usage")] == [31, 2, 0.08]
    assert e.fields["cuda graph"] == "True"
    assert e.gen_tok_s is None  # prefill throughput is not generation throughput
    d = p.parse(
        "[2026-04-05 20:02:52 TP0] Decode batch [1234], #running-req: 29, #token: 10096, "
        "token usage: 0.07, cuda graph: True, gen throughput (token/s): 1635.11, #queue-req: 0"
    )
    assert isinstance(d, ev.Batch) and d.gen_tok_s == 1635.11 and d.rank == "TP0"


def test_decode_line_cut_before_its_value_is_not_a_sample():
    p = Parser()
    cut = p.parse("[2025-02-27 04:46:55 TP0] Decode batch. #running-req: 8, #token: 65411, gen thr")
    assert isinstance(cut, ev.Batch) and cut.gen_tok_s is None
    half = p.parse(
        "[2025-02-27 04:46:55 TP0] Decode batch. #running-req: 8, gen throughput (token/s): 18"
    )
    assert half.gen_tok_s is None


def test_unknown_lines_pass_as_plain_log_lines():
    p = Parser()
    for line in (
        "",
        "hello",
        "[Gloo] Rank 0 is connected to 0 peer ranks.",
        "[2026-01-01 10:00:00] ?",
    ):
        assert p.parse(line) is None


def test_piecewise_compile_then_capture_then_prefill_shapes(replay_fixture):
    s = replay_fixture("sglang/piecewise_compile_0_5.log")
    assert captures(s) == [
        ("decode", 2, 2, True),
        ("piecewise", 3, 3, True),
        ("compile", 3, 3, True),
        ("prefill", 1, 2, False),
    ]
    assert [c.seconds for c in s.graph_captures][:2] == [4.10, 17.90]
    assert s.state == "capturing_graphs"
    names = phase_names(s)
    assert names == ["capturing_graphs", "compiling", "capturing_graphs"]
    # The compile bar starts after the last stamp and lasts its own 15 s.
    compiling = s.phases[1]
    assert (compiling.started_at, compiling.seconds) == ("2025-12-01T09:00:04", 15.0)


def test_a_capture_bar_without_a_description_is_that_captures_progress(replay_fixture):
    from sgwatch.live.ingest import LogIngest

    data = (FIXTURES / "sglang/capture_bar_without_description.log").read_bytes()
    ingest, seen = LogIngest(), []
    for chunk in data.splitlines(keepends=True):  # as the log is written
        ingest.feed(chunk)
        seen += [(c.kind, c.done, c.total) for c in ingest.state.captures if c.open]
    # The unnamed 0/13 frame (glued to TP1's record) is the open capture's N/M.
    assert ("decode", 0, 13) in seen
    s = replay_fixture("sglang/capture_bar_without_description.log")
    assert captures(s) == [("decode", 13, 13, True)]
    assert s.state == "warming_up"


def test_a_log_cut_inside_a_traceback_after_capture_begin_is_a_crash_in_capture(replay_fixture):
    s = replay_fixture("sglang/crash_cut_traceback_in_capture.log")
    assert s.state == "crashed"
    assert s.crash.phase == "capturing_graphs"
    # The cause is the innermost frame the log has, with its code.
    assert s.crash.summary == (
        "traceback during graph capture at flashinfer_backend.py:1015 in call_begin_forward: "
        "wrapper.begin_forward("
    )


def test_a_whole_traceback_in_capture_ends_on_its_exception_line():
    data = (FIXTURES / "sglang/crash_cut_traceback_in_capture.log").read_text()
    data += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    p = Parser()
    crashes = [e for e in p.parse_lines(data.splitlines()) if isinstance(e, ev.Crash)]
    assert not any(c.specific for c in crashes[:-1])  # held as vague until the exception
    assert crashes[-1].specific and crashes[-1].exception == "torch.OutOfMemoryError"


def test_the_server_args_dump_carries_the_runs_identity():
    line = (
        "[2026-01-01 10:00:00] server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3', "
        "tp_size=16, pp_size=1, dp_size=2, ep_size=16, speculative_algorithm='EAGLE', "
        "speculative_draft_model_path='lmsys/DeepSeek-V3-NextN', speculative_num_steps=3, "
        "speculative_num_draft_tokens=4, nnodes=2, node_rank=1, enable_metrics=True)"
    )
    (e,) = Parser().parse_lines([line])
    assert isinstance(e, ev.RunStarted) and e.args["enable_metrics"] is True
    assert e.identity == RunIdentity(
        "deepseek-ai/DeepSeek-V3",
        tp=16,
        pp=1,
        dp=2,
        ep=16,
        speculative=Speculative("EAGLE", 3, 4, "lmsys/DeepSeek-V3-NextN"),
        node_rank=1,
        nnodes=2,
    )
    assert e.identity.parallel == "TP16 DP2 EP16"
    (plain,) = Parser().parse_lines(["[2026-01-01 10:00:00] server_args=ServerArgs(tp_size=1)"])
    assert plain.identity == RunIdentity(tp=1) and plain.identity.parallel == ""
