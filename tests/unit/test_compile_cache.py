"""torch.compile's cache, per run: a hit (its graphs loaded from the compile cache) or a
miss (compiled anew), and its time, in replay, its JSON, the warmup checklist, the
experiments table and the ETA to ready. Lines in each engine's own shapes."""

from __future__ import annotations

import json

from sgwatch.cli.replay import render_timeline
from sgwatch.control import experiments as ex
from sgwatch.control.history import History, earlier_runs
from sgwatch.core import events as ev
from sgwatch.core.cmdline import parse
from sgwatch.core.eta import Earlier, ready_eta
from sgwatch.ui.experiments_screen import _cells
from sgwatch.ui.widgets.warmup import _checklist
from tests.replaylines import ingested, replay

_W = "(EngineCore_DP0 pid=200) INFO 01-05 10:00:{:02d} [{}] {}"
VLLM_START = [
    "(APIServer pid=100) INFO 01-05 10:00:00 [api_server.py:1] vLLM API server version 0.11.0",
    _W.format(5, "gpu_model_runner.py:2", "Model loading took 15.2 GiB and 12.0 seconds"),
    _W.format(
        6,
        "backends.py:548",
        "Using cache directory: /root/.cache/vllm/torch_compile_cache/ab12/rank_0_0/backbone"
        " for vLLM's torch.compile",
    ),
    _W.format(12, "backends.py:559", "Dynamo bytecode transform time: 6.10 s"),
]
VLLM_HIT = [
    *VLLM_START,
    _W.format(
        15,
        "backends.py:164",
        "Directly load the compiled graph(s) for dynamic shape from the cache, took 2.93 s",
    ),
    _W.format(16, "monitor.py:34", "torch.compile takes 9.03 s in total"),
]
VLLM_MISS = [
    *VLLM_START,
    _W.format(53, "backends.py:215", "Compiling a graph for compile range (1, 8192) takes 41.20 s"),
    _W.format(55, "monitor.py:53", "torch.compile took 48.75 s in total"),
]


def test_a_vllm_cache_hit_is_told_with_torch_compiles_whole_time():
    s = replay(VLLM_HIT)
    assert s.state == "compiling"
    assert (s.compile.cache, s.compile.seconds) == ("hit", 9.03)
    assert "compile 9.0 s, cache hit" in render_timeline(s, "x.log")
    assert json.loads(s.model_dump_json())["compile"] == {"cache": "hit", "seconds": 9.03}


def test_a_vllm_miss_before_its_total_line_gives_the_graphs_time():
    s = replay(VLLM_MISS[:-1])
    assert (s.compile.cache, s.compile.seconds) == ("miss", 41.2)
    s = replay(VLLM_MISS)
    assert (s.compile.cache, s.compile.seconds) == ("miss", 48.75)


def test_one_rank_compiling_anew_makes_the_run_a_miss():
    other = "(Worker_TP1 pid=201) INFO 01-05 10:00:40 [backends.py:215] "
    lines = [*VLLM_HIT[:-1], other + "Compiling a graph for dynamic shape takes 25.00 s"]
    assert replay(lines).compile.cache == "miss"


def test_sglang_piecewise_compile_lines_are_a_miss():
    lines = [
        "[2026-01-05 10:00:00 TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16,"
        " avail mem=60.00 GB, mem usage=16.00 GB.",
        "[2026-01-05 10:00:01 TP0] KV Cache is allocated. #tokens: 400000, K size: 9.00 GB,"
        " V size: 9.00 GB",
        "[2026-01-05 10:00:02 TP0] Capture piecewise CUDA graph begin. avail mem=20.00 GB",
        "[2026-01-05 10:00:33 TP0] Compiling a graph for dynamic shape takes 30.12 s",
    ]
    s = replay(lines)
    assert s.engine == "sglang"
    assert (s.compile.cache, s.compile.seconds) == ("miss", 30.12)
    assert replay(lines[:-1]).compile is None  # no compile line, nothing said


def test_the_warmup_checklist_says_compile_time_and_cache():
    shown = _checklist(ingested(VLLM_HIT).state, None, None).plain
    assert "compile 9s, cache hit" in shown
    assert "cache hit" not in _checklist(ingested(VLLM_MISS).state, None, None).plain
    assert "compile " not in _checklist(ingested(VLLM_START[:2]).state, None, None).plain


def test_the_experiments_table_keeps_each_runs_compile(tmp_path):
    h = History("ct129", tmp_path)
    cmd = parse(["vllm", "serve", "Qwen/Qwen3-8B"])
    hit, miss = h.launched(cmd, "/srv", 100), h.launched(cmd, "/srv", 200)
    h.outcome(hit, "ready", warmup_seconds=60.0)
    h.note(hit, **ex.ready_facts(ingested(VLLM_HIT).state))
    h.outcome(miss, "ready", warmup_seconds=100.0)
    h.note(miss, **ex.ready_facts(ingested(VLLM_MISS).state))
    rows = ex.table(h.runs(), None, lambda _a, _b: [])
    assert [(r.compile_s, r.compile_cache) for r in rows] == [(9.03, "hit"), (48.75, "miss")]
    assert _cells(rows[0])[-1].plain == "9.0 hit"
    assert ex.records(rows)[1]["compile_cache"] == "miss"
    assert [e.compile_cache for e in earlier_runs(h.runs(), {}, None)] == ["hit", "miss"]


def _earlier(compile_s: float, cache: str | None) -> Earlier:
    phases = {ev.LOADING_WEIGHTS: 20.0, ev.COMPILING: compile_s, ev.CAPTURING_GRAPHS: 30.0}
    return Earlier(frozenset(), phases, 50.0 + compile_s, cache)


def test_after_a_hit_line_the_eta_takes_the_compile_of_earlier_hits():
    runs = [_earlier(120.0, "miss"), _earlier(10.0, "hit"), _earlier(110.0, "miss")]
    spent = {ev.LOADING_WEIGHTS: 20.0, ev.COMPILING: 8.0}
    unknown = ready_eta(frozenset(), runs, spent, ev.COMPILING)
    hit = ready_eta(frozenset(), runs, spent, ev.COMPILING, "hit")
    assert unknown is not None and hit is not None
    assert unknown.seconds == 110.0 + 30.0 - 8.0  # the median compile of all three
    assert hit.seconds == 10.0 + 30.0 - 8.0
    assert "compile cache hit" in hit.basis and "cache" not in unknown.basis


def test_a_hit_no_earlier_run_had_leaves_no_compile_ahead():
    runs = [_earlier(120.0, "miss"), _earlier(100.0, None)]
    spent = {ev.LOADING_WEIGHTS: 20.0, ev.COMPILING: 9.0}
    hit = ready_eta(frozenset(), runs, spent, ev.COMPILING, "hit")
    assert hit is not None and hit.seconds == 30.0  # the capture only
    miss = ready_eta(frozenset(), runs, spent, ev.COMPILING, "miss")
    assert miss is not None and miss.seconds == 120.0 + 30.0 - 9.0


def test_a_cached_model_that_fails_to_load_and_compiles_again_is_a_miss():
    again = _W.format(
        17,
        "decorators.py:1",
        "Compiling model again due to a load failure from /root/.cache/vllm/torch_compile_cache/"
        "torch_aot_compile/ab/rank_0_0/model, reason: version mismatch",
    )
    s = replay([*VLLM_HIT, again])
    assert (s.compile.cache, s.compile.seconds) == ("miss", 9.03)
