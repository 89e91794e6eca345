"""SGLang's own start-up timings, per step, in replay and its JSON; and a vLLM run
without progress bars (`--no-use-tqdm-on-load`), whose capture only its end line tells,
closing the capture with its length and going on to ready. Lines in the engines' shapes."""

from __future__ import annotations

import json

from sgwatch.cli.replay import render_timeline
from tests.replaylines import replay

_SG = "[2026-03-04 09:00:{:02d}] {}"
SGLANG_0_5_23 = [
    _SG.format(0, "server_args={'model_path': 'Qwen/Qwen3-8B', 'tp_size': 1}"),
    _SG.format(1, "Load weight begin. avail mem=78.00 GB"),
    _SG.format(
        13,
        "Load weight end. elapsed=12.02 s, type=Qwen3ForCausalLM, avail mem=62.00 GB,"
        " mem usage=16.00 GB.",
    ),
    _SG.format(
        14,
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 392920, K size: 20.00 GB,"
        " V size: 20.00 GB",
    ),
    _SG.format(
        50,
        "max_total_num_tokens=392920, chunked_prefill_size=8192, max_prefill_tokens=16384,"
        " max_running_requests=4096, context_len=40960, available_gpu_mem=10.54 GB",
    ),
    _SG.format(
        51,
        "Engine startup timings (s): load_weight=12.02, kv_cache_allocation=0.02,"
        " scheduler_e2e=52.09, cuda_graph={prefill=22.96, decode=12.26, target_verify=0.00},"
        " tokenizer_e2e=65.82",
    ),
]
OLDER = [
    "[2025-10-01 12:00:00 TP0] Startup timing: load_model took 41.502s",
    "[2025-10-01 12:00:30 TP0] Startup timing: init_cuda_graphs took 28.117s",
    "[2025-10-01 12:00:31] Setting startup metric: tokenizer_manager took 2.250s",
]


def test_sglang_0_5_23s_summary_is_kept_step_by_step():
    s = replay(SGLANG_0_5_23)
    assert s.startup_timings == {
        "load_weight": 12.02,
        "kv_cache_allocation": 0.02,
        "scheduler_e2e": 52.09,
        "cuda_graph.prefill": 22.96,
        "cuda_graph.decode": 12.26,
        "cuda_graph.target_verify": 0.0,
        "tokenizer_e2e": 65.82,
    }
    assert json.loads(s.model_dump_json())["startup_timings"]["cuda_graph.decode"] == 12.26
    text = render_timeline(s, "x.log")
    assert "start-up timings (the server's own)" in text
    assert "  cuda_graph.prefill              23.0 s" in text


def test_the_timers_line_a_step_is_kept_too():
    s = replay(OLDER)
    assert s.startup_timings == {
        "load_model": 41.502,
        "init_cuda_graphs": 28.117,
        "tokenizer_manager": 2.25,
    }


def test_a_run_without_timings_shows_none():
    s = replay(SGLANG_0_5_23[:-1])
    assert s.startup_timings == {}
    assert "start-up timings" not in render_timeline(s, "x.log")


_V = "(EngineCore_DP0 pid=200) INFO 01-05 10:{} [{}] {}"
VLLM_NO_BARS = [
    "(APIServer pid=100) INFO 01-05 10:00:00 [api_server.py:1] vLLM API server version 0.11.0",
    "(APIServer pid=100) INFO 01-05 10:00:00 [utils.py:2] non-default args: {'model': 'm',"
    " 'use_tqdm_on_load': False}",
    _V.format("00:03", "gpu_model_runner.py:4", "Starting to load model m..."),
    _V.format("00:15", "default_loader.py:5", "Loading weights took 11.20 seconds"),
    _V.format("00:43", "kv_cache_utils.py:11", "GPU KV cache size: 292,144 tokens"),
    _V.format(
        "01:08", "gpu_model_runner.py:12", "Graph capturing finished in 25 secs, took 0.52 GiB"
    ),
    _V.format(
        "01:08", "core.py:13", "init engine (profile, create kv cache, warmup model) took 52.3 s"
    ),
    "(APIServer pid=100) INFO 01-05 10:01:09 [api_server.py:14] Supported tasks: ['generate']",
    "INFO:     Application startup complete.",
]


def test_a_vllm_capture_told_only_by_its_end_line_has_its_length_and_the_run_gets_ready():
    during = replay(VLLM_NO_BARS[:6])
    assert during.state == "warming_up"
    capture = next(p for p in during.phases if p.name == "capturing_graphs")
    assert (capture.started_at, capture.ended_at, capture.seconds) == ("10:00:43", "10:01:08", 25.0)
    [graphs] = during.graph_captures
    assert (graphs.seconds, graphs.ended) == (25.0, True)
    s = replay(VLLM_NO_BARS)
    assert (s.state, s.ready) == ("ready", True)
    assert [p.name for p in s.phases][-2:] == ["capturing_graphs", "warming_up"]
    assert "capturing_graphs" in render_timeline(s, "x.log")
