"""vLLM's capture bars name the engine and the graphs they capture, read from the
label vLLM gives each (V1 runner `(decode, FULL)` / `(mixed prefill-decode,
PIECEWISE)`, model runner V2 `(mixed, PIECEWISE)` / `(FULL)`, 0.21's speculator
bars, V0's `Capturing CUDA graph shapes`, 0.9's unlabelled one)."""

# ruff: noqa: E501 (whole log lines)

import pytest

from tests.replaylines import replay

FRAME = ":  35%|███▌      | 18/51 [00:03<00:05,  5.70it/s]"


def captures(s):
    return [(c.kind, c.done, c.total, c.ended) for c in s.graph_captures]


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        ("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)", "piecewise"),  # V1 runner
        ("Capturing CUDA graphs (decode, FULL)", "decode"),
        ("Capturing CUDA graphs (mixed, PIECEWISE)", "piecewise"),  # model runner V2
        ("Capturing CUDA graphs (PIECEWISE)", "piecewise"),
        ("Capturing CUDA graphs (FULL)", "decode"),
        ("Capturing CUDA graph shapes", "decode"),  # V0
        ("Capturing eagle prefill CUDA graphs (FULL)", "draft_prefill"),  # 0.21's speculator
        ("Capturing eagle decode CUDA graphs (FULL)", "draft"),
    ],
)
def test_an_excerpt_of_bars_alone_names_vllm_and_the_capture(label, kind):
    s = replay([label + FRAME])
    assert (s.engine, s.state) == ("vllm", "capturing_graphs")
    assert captures(s) == [(kind, 18, 51, False)]


def test_vllm_0_9s_unlabelled_bar_is_piecewise_when_the_run_compiles():
    compiled = [
        "(VllmWorker rank=0 pid=1) INFO 06-16 10:00:10 [default_loader.py:262] Loading weights took 5.10 seconds",
        "(VllmWorker rank=0 pid=1) INFO 06-16 10:00:30 [backends.py:530] Dynamo bytecode transform time: 3.10 s",
        "Capturing CUDA graphs" + FRAME,
    ]
    assert captures(replay(compiled)) == [("piecewise", 18, 51, False)]
    # The engine config says so before any compile line does.
    configured = [
        "INFO 06-16 10:00:00 [core.py:1] Initializing a V1 LLM engine (v0.9.1) with config: model='m', "
        'compilation_config={"level":3,"debug_dump_path":"","cache_dir":""}',
        "Capturing CUDA graphs" + FRAME,
    ]
    assert captures(replay(configured)) == [("piecewise", 18, 51, False)]
    eager = [
        "INFO 06-16 10:00:00 [core.py:1] Initializing a V1 LLM engine (v0.9.1) with config: model='m', "
        'compilation_config={"level":0,"debug_dump_path":"","cache_dir":""}',
        "Capturing CUDA graphs" + FRAME,
    ]
    assert captures(replay(eager)) == [("decode", 18, 51, False)]


def test_target_then_draft_captures_are_each_their_own():
    bar = "|██████████| 4/4 [00:01<00:00,  3.90it/s]"
    s = replay(
        [
            "(EngineCore_DP0 pid=9) INFO 03-02 10:14:50 [kv_cache_utils.py:1087] GPU KV cache size: 394,864 tokens",
            "Capturing CUDA graphs (PIECEWISE): 100%" + bar,
            "Capturing CUDA graphs (FULL): 100%" + bar,
            "Capturing eagle prefill CUDA graphs (FULL): 100%" + bar,
            "Capturing eagle decode CUDA graphs (FULL):  50%|█████     | 2/4 [00:00<00:00,  3.90it/s]",
        ]
    )
    assert captures(s) == [
        ("piecewise", 4, 4, True),
        ("decode", 4, 4, True),
        ("draft_prefill", 4, 4, True),
        ("draft", 2, 4, False),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "torch.compile takes 20.20 s in total",
        "torch.compile took 14.85 s in total",
        "torch.compile and initial profiling/warmup run together took 34.69 s in total",  # 2026
        "Directly load the compiled graph(s) for compile range (1, 8192) from the cache, took 1.021 s",
        "Compiling a graph for compile range (1, 16384) takes 20.50 s",
        "Compiling a graph for dynamic shape takes 13.62 s",
    ],
)
def test_each_compile_line_shape_is_compiling(line):
    s = replay(
        [
            "(EngineCore pid=8) INFO 07-22 04:31:12 [default_loader.py:384] Loading weights took 2.91 seconds",
            f"(EngineCore pid=8) INFO 07-22 04:31:51 [monitor.py:48] {line}",
        ]
    )
    assert s.state == "compiling"
