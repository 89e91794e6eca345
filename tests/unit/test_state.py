"""Reducer rules (docs/design/architecture.md) that a user sees as the state badge and timeline."""

import statistics

import pytest

from sgwatch.core import events as ev
from sgwatch.core.identity import RunIdentity
from sgwatch.core.ratecounts import MEDIAN_ERROR
from sgwatch.core.state import HISTORY, ServerState

MEDIAN_TOLERANCE = MEDIAN_ERROR + 1e-9  # the stated error, plus float rounding


def fold(*events):
    s = ServerState()
    for e in events:
        s.apply(e)
    return s


def test_a_slow_rank_does_not_move_warmup_backwards():
    s = fold(
        ev.PhaseSeen("2026-01-01 10:00:00", "TP0", ev.LOADING_WEIGHTS),
        ev.WeightsLoaded("2026-01-01 10:00:20", "TP0", 20.0, 15.0),
        ev.PhaseSeen("2026-01-01 10:00:21", "TP3", ev.LOADING_WEIGHTS),  # late rank
    )
    assert s.state == ev.ALLOCATING_KV_CACHE
    assert [p.name for p in s.phases] == [ev.LOADING_WEIGHTS, ev.ALLOCATING_KV_CACHE]


def test_capture_and_compile_alternate_then_warmup_when_all_bars_close():
    def bar(kind, n, total, elapsed):
        return ev.Progress(None, kind, "desc", n, total, elapsed, after="2026-01-01 10:00:00")

    s = fold(
        ev.CaptureBegin("2026-01-01 10:00:00", "TP0", "decode", [1, 2]),
        bar("decode", 2, 2, 5.0),
    )
    assert s.state == ev.WARMING_UP  # every capture so far has ended
    s.apply(bar("compile", 0, 4, 0.0))
    assert s.state == ev.COMPILING  # ...but a compile bar reopens the capture stage
    s.apply(bar("compile", 4, 4, 10.0))
    s.apply(bar("piecewise", 1, 4, 1.0))
    assert s.state == ev.CAPTURING_GRAPHS
    assert [p.name for p in s.phases] == [ev.CAPTURING_GRAPHS, ev.COMPILING, ev.CAPTURING_GRAPHS]
    # Untimed bars are placed one after another by their own clocks.
    assert s.phases[1].started_at == "2026-01-01 10:00:05"
    assert s.phases[1].seconds == 10.0 and s.phases[1].started_estimated
    s.apply(ev.Capacity("2026-01-01 10:00:30", 1000))
    assert s.state == ev.WARMING_UP
    assert all(not c.open for c in s.captures)


def test_a_nameless_first_frame_before_a_compile_does_not_start_the_capture_after_it():
    # SGLang's piecewise graphs: the num_tokens list (stamped), then tqdm's nameless
    # first frame "0/50" and the compile bar, then another nameless "0/50" and the
    # capture bar. Both nameless frames fit the open piecewise capture; the capture
    # starts when its own bar does, after the compile's 49 s, not at the first one.
    def bar(kind, n, elapsed):
        return ev.Progress(None, kind, "", n, 50, elapsed, after="2026-01-01 10:00:00")

    s = fold(
        ev.CaptureSizes("2026-01-01 10:00:00", "TP0", "piecewise", list(range(50))),
        bar("unnamed", 0, 0.0),
        bar("compile", 0, 0.0),
        bar("compile", 50, 49.0),
        bar("unnamed", 0, 0.0),
        bar("piecewise", 0, 0.0),
        bar("piecewise", 50, 16.0),
    )
    compile_, capture = s.phases[-3], s.phases[-2]
    assert (compile_.name, compile_.seconds) == (ev.COMPILING, 49.0)
    assert (capture.name, capture.started_at) == (ev.CAPTURING_GRAPHS, "2026-01-01 10:00:49")
    assert capture.seconds == 16.0


def test_crash_holds_until_a_new_run():
    s = fold(
        ev.PhaseSeen("2026-01-01 10:00:00", None, ev.LOADING_WEIGHTS),
        ev.Crash("2026-01-01 10:00:05", "TP1", "Scheduler hit an exception", "l1"),
        ev.Crash(None, None, "torch.OutOfMemoryError: CUDA out of memory", "l2", "x", True),
        ev.Crash("2026-01-01 10:00:06", None, "Received sigquit", "l3", None, False, 137),
        ev.Ready("2026-01-01 10:00:07"),
        ev.PhaseSeen("2026-01-01 10:00:08", "TP0", ev.LOADING_WEIGHTS),
    )
    assert s.state == ev.CRASHED and not s.ready
    assert s.crash.summary == "torch.OutOfMemoryError: CUDA out of memory"
    assert s.crash.phase == ev.LOADING_WEIGHTS and s.crash.exit_code == 137
    s.apply(ev.RunStarted("2026-01-01 10:01:00", "server_args", "{}"))
    assert s.state == ev.STARTING and s.crash is None and s.runs == 2


def test_entrypoint_banner_then_args_dump_is_one_run_timed_by_the_dump():
    s = fold(ev.RunStarted(None, "entrypoint"), ev.RunStarted("2026-01-01 10:00:00", "server_args"))
    assert s.runs == 1 and len(s.phases) == 1
    assert s.phases[0].started_at == "2026-01-01 10:00:00"


def test_batch_lines_without_startup_are_an_excerpt_of_a_serving_server():
    s = fold(ev.Batch("2026-01-01 10:00:00", "TP0", "decode", gen_tok_s=100.0))
    assert s.state == ev.SERVING and not s.ready


def test_warmup_request_batch_before_ready_is_not_serving():
    s = fold(
        ev.Capacity("2026-01-01 10:00:00", 1000),
        ev.Batch("2026-01-01 10:00:01", None, "prefill"),
    )
    assert s.state == ev.WARMING_UP


def test_median_within_its_stated_error_max_exact_and_history_bounded():
    s = ServerState()
    values = [float((i * 7919) % 101) / 4 for i in range(HISTORY + 11)]
    for v in values:
        s.apply(ev.Batch(None, "TP0", "decode", gen_tok_s=v, accept_len=2.0))
    t = s.throughput
    assert t.samples == len(values)
    assert len(t.history) == HISTORY
    assert t.median == pytest.approx(statistics.median(values), abs=MEDIAN_TOLERANCE)
    assert t.max == 25.0
    s.apply(ev.Batch(None, "TP0", "decode", gen_tok_s=1000.0))
    assert t.median == pytest.approx(statistics.median([*values, 1000.0]), abs=MEDIAN_TOLERANCE)
    assert t.max == 1000.0
    assert t.accept_len_mean == 2.0


def test_phase_seconds_across_midnight_with_time_only_stamps():
    s = fold(
        ev.PhaseSeen("23:59:50", "TP0", ev.LOADING_WEIGHTS),
        ev.WeightsLoaded("00:00:10", "TP0", None, None),
    )
    assert s.phases[0].seconds == 20.0


def test_the_draft_models_weights_are_kept_apart_from_the_targets():
    """Speculative decoding loads a draft model after the target's graphs: its
    `Load weight end` must not replace the target's weights (the roofline's ceiling)."""
    s = fold(
        ev.WeightsLoaded("2026-01-01 10:00:01", "TP1", 16.0, 25.15),
        ev.WeightsLoaded("2026-01-01 10:00:01", "TP0", 16.1, 25.14),
        ev.CaptureBegin("2026-01-01 10:00:02", "TP0", "decode", [1, 2]),
        ev.WeightsLoaded("2026-01-01 10:00:30", "TP0", 1.5, 0.76),
        ev.WeightsLoaded("2026-01-01 10:00:30", "TP1", 1.5, 0.74),
    )
    assert s.weights.mem_usage_gb == {"TP0": 25.14, "TP1": 25.15}
    assert s.weights.draft_mem_usage_gb == {"TP0": 0.76, "TP1": 0.74}


def test_an_override_said_before_the_dump_belongs_to_the_run_the_dump_starts():
    """SGLang warns while it resolves its arguments, before it logs them."""
    said = ev.Overridden(None, "mem_fraction_static", 0.76, None, "Automatically reduce ...")
    s = fold(
        ev.PhaseSeen("2026-01-01 10:00:00", "TP0", ev.LOADING_WEIGHTS),
        said,
        ev.RunStarted("2026-01-01 10:00:01", "server_args", {"mem_fraction_static": 0.76}),
    )
    assert s.args["_overridden"] == {"mem_fraction_static": (None, "Automatically reduce ...")}
    # One said during the old run's warmup does not follow into the next run.
    s.apply(ev.PhaseSeen("2026-01-01 10:00:05", "TP0", ev.LOADING_WEIGHTS))
    s.apply(ev.Crash("2026-01-01 10:00:06", "TP0", "boom", "boom"))
    s.apply(ev.RunStarted("2026-01-01 10:01:00", "server_args", {"tp_size": 2}))
    assert s.args == {"tp_size": 2}


def test_a_later_dump_of_the_same_run_keeps_what_the_server_said_it_overrode():
    """vLLM logs its arguments more than once a run (non-default args, then the engine's
    config) and warns between them: the state keeps the override, no parser need."""
    s = fold(
        ev.RunStarted("09-24 20:46:01", "non-default args", {"model": "m"}),
        ev.Overridden("09-24 20:46:02", "cudagraph_mode", "PIECEWISE", "FULL", "not supported"),
        ev.RunStarted("09-24 20:46:03", "engine config", {"model": "m", "max_model_len": 4096}),
    )
    assert s.runs == 1
    assert s.args["cudagraph_mode"] == "PIECEWISE"
    assert s.args["_overridden"] == {"cudagraph_mode": ("FULL", "not supported")}


def test_the_identity_is_the_latest_dumps_and_a_new_run_starts_without_one():
    first = RunIdentity("m", tp=2)
    s = fold(ev.RunStarted("2026-01-01 10:00:00", "server_args", {}, identity=first))
    assert s.identity is first
    s.apply(ev.RunStarted("2026-01-01 10:00:01", "banner", None, "0.11.0"))  # says no settings
    assert s.identity is first and s.identity.parallel == "TP2"
    s.apply(ev.Crash("2026-01-01 10:00:02", None, "boom", "boom"))
    s.apply(ev.RunStarted("2026-01-01 10:01:00", "banner"))
    assert s.runs == 2 and s.identity is None  # the next run's dump has not come yet
