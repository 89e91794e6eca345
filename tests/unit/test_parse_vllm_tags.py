"""vLLM's process tags, nested and raced: the rank of each record is its worker's
within its engine core (0.10: `(EngineCore_0 pid=N) (VllmWorker TP1 pid=N)`)."""

# ruff: noqa: E501 (whole log lines)

import pytest

from sgwatch.engines.vllm.prefix import split
from tests.replaylines import replay


@pytest.mark.parametrize(
    ("tags", "rank"),
    [
        ("(EngineCore_0 pid=4411) (VllmWorker TP1 pid=4420)", "DP0 TP1"),  # 0.10
        ("(EngineCore_1 pid=4411) (VllmWorker PP1_TP3 pid=4420)", "DP1 PP1 TP3"),  # 0.10, pipeline
        ("(EngineCore_DP0 pid=1) (VllmWorker rank=1 pid=2)", "DP0 TP1"),
        ("(EngineCore pid=1) (VllmWorker TP1 pid=2)", "TP1"),  # one engine: no data-parallel rank
        ("(VllmWorker DP0 TP1 pid=2)", "DP0 TP1"),
        ("(VllmWorker TP1 pid=4420)", "TP1"),
        ("(EngineCore_0 pid=4411)", "DP0"),
        ("(Worker_DP1_TP0 pid=2) (Worker_DP0_TP1 pid=3)", "DP0 TP1"),  # raced: the last tag's
        ("(EngineCore_0 pid=1) (Worker_DP1_TP0 pid=2)", "DP1 TP0"),  # the worker names its own
    ],
)
def test_the_rank_is_the_last_workers_within_its_engine_core(tags, rank):
    record = split(
        f"{tags} INFO 09-01 12:00:03 [backends.py:530] Dynamo bytecode transform time: 3.10 s"
    )
    assert record is not None
    assert (record.ts, record.rank, record.level, record.source) == (
        "12:00:03",
        rank,
        "INFO",
        "backends.py",
    )
    assert record.message == "Dynamo bytecode transform time: 3.10 s"


def test_vllm_0_10_nested_worker_lines_carry_the_warmup_through_compile_and_capture():
    s = replay(
        [
            "(APIServer pid=4400) INFO 09-01 12:00:00 [api_server.py:1] vLLM API server version 0.10.1",
            "(EngineCore_0 pid=4411) (VllmWorker TP0 pid=4419) INFO 09-01 12:00:01 [gpu_model_runner.py:1] Starting to load model m...",
            "(EngineCore_0 pid=4411) (VllmWorker TP1 pid=4420) INFO 09-01 12:00:01 [gpu_model_runner.py:1] Starting to load model m...",
            "(EngineCore_0 pid=4411) (VllmWorker TP1 pid=4420) INFO 09-01 12:00:20 [default_loader.py:262] Loading weights took 5.10 seconds",
            "(EngineCore_0 pid=4411) (VllmWorker TP1 pid=4420) INFO 09-01 12:00:33 [backends.py:530] Dynamo bytecode transform time: 3.10 s",
            "(EngineCore_0 pid=4411) (VllmWorker TP1 pid=4420) INFO 09-01 12:00:50 [monitor.py:34] torch.compile takes 20.2 s in total",
            "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  50%|█████     | 33/67 [00:05<00:05,  6.50it/s]",
        ]
    )
    assert (s.engine, s.state) == ("vllm", "capturing_graphs")
    assert [p.name for p in s.phases] == [
        "starting",
        "loading_weights",
        "allocating_kv_cache",
        "compiling",
        "capturing_graphs",
    ]
    assert {p.name: p for p in s.phases}["compiling"].started_at == "12:00:29.900000"


def test_a_bar_with_a_0_10_workers_record_glued_on_is_both():
    s = replay(
        [
            "Capturing CUDA graphs (decode, FULL):  97%|█████████▋| 65/67 [00:15<00:00,  4.58it/s]"
            "(VllmWorker TP1 pid=2) INFO 09-29 09:52:20 [gpu_model_runner.py:3468] "
            "Graph capturing finished in 38 secs, took 1.64 GiB"
        ]
    )
    assert [(c.kind, c.done, c.total, c.seconds) for c in s.graph_captures] == [
        ("decode", 67, 67, 38.0)  # the bar at 65, then the end line closes it
    ]
