"""A log that begins mid-traceback (`kubectl logs --tail`, a rotated file, an
excerpt): an engine process's ERROR-level exception line is the crash and its cause,
with or without the traceback's header before it; an API server's error for one
request is not."""

# ruff: noqa: E501 (whole log lines)

import pytest

from tests.replaylines import replay


@pytest.mark.parametrize(
    "line",
    [
        "(VllmWorker rank=1 pid=812) ERROR 07-01 09:00:00 [multiproc_executor.py:527] RuntimeError: CUDA error: out of memory",  # 0.8
        "(Worker_TP1 pid=812) ERROR 07-01 09:00:00 [multiproc_executor.py:611] RuntimeError: CUDA error: out of memory",  # 0.11
        "(EngineCore_0 pid=80) (VllmWorker TP1 pid=812) ERROR 07-01 09:00:00 [multiproc_executor.py:546] RuntimeError: CUDA error: out of memory",  # 0.10
        "(EngineCore_DP0 pid=80) ERROR 07-01 09:00:00 [core.py:708] RuntimeError: CUDA error: out of memory",
        "2026-07-01T09:00:00.5Z (Worker_TP1 pid=812) ERROR 07-01 09:00:00 [multiproc_executor.py:611] RuntimeError: CUDA error: out of memory",
    ],
)
def test_an_engine_processs_exception_line_alone_is_the_crash(line):
    s = replay([line])
    assert (s.engine, s.state) == ("vllm", "crashed")
    assert (s.crash.summary, s.crash.exception) == (
        "RuntimeError: CUDA error: out of memory",
        "RuntimeError",
    )


def test_v0s_single_process_logs_it_untagged():
    s = replay(
        [
            "INFO 07-01 08:59:00 api_server.py:585] vLLM API server version 0.6.5",
            "ERROR 07-01 09:00:00 worker_base.py:464] RuntimeError: CUDA error: out of memory",
        ]
    )
    assert (s.state, s.crash.summary) == ("crashed", "RuntimeError: CUDA error: out of memory")


def test_frames_before_it_without_the_header_end_in_the_same_crash():
    worker = "(VllmWorker rank=1 pid=812) ERROR 07-01 09:00:00 [multiproc_executor.py:527]"
    s = replay(
        [
            "(VllmWorker rank=0 pid=811) INFO 07-01 08:59:50 [gpu_model_runner.py:1] Graph capturing finished in 12 secs, took 0.95 GiB",
            f'{worker}   File "/usr/lib/python3.12/site-packages/torch/cuda/graphs.py", line 84, in capture_end',
            f"{worker}     super().capture_end()",
            f"{worker} torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.",
        ]
    )
    assert s.state == "crashed"
    assert (
        s.crash.summary
        == "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB."
    )
    assert s.crash.exception == "torch.OutOfMemoryError"


def test_the_api_servers_error_for_one_request_is_no_crash():
    s = replay(
        [
            "(APIServer pid=7) INFO:     Application startup complete.",
            "(APIServer pid=7) ERROR 07-01 09:00:00 [serving_chat.py:222] ValueError: This model's maximum context length is 4096 tokens.",
            "ERROR 07-01 09:00:01 serving_completion.py:120] ValueError: This model's maximum context length is 4096 tokens.",
            "(EngineCore_DP0 pid=80) WARNING 07-01 09:00:02 [core.py:1] RuntimeError: a warning is no crash",
        ]
    )
    assert (s.engine, s.state, s.crash) == ("vllm", "ready", None)


def test_the_api_servers_see_root_cause_gives_way_to_the_engines_cause():
    s = replay(
        [
            "(EngineCore_DP0 pid=80) ERROR 07-01 09:00:00 [core.py:708] ValueError: No available memory for the cache blocks.",
            "(APIServer pid=7) ERROR 07-01 09:00:01 [api_server.py:1] RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
        ]
    )
    assert s.crash.summary == "ValueError: No available memory for the cache blocks."


def test_sglangs_scheduler_exception_is_a_crash_wherever_the_log_starts():
    s = replay(
        [
            "[2026-01-10 08:00:00 DP1 TP3] Scheduler hit an exception: Traceback (most recent call last):",
            '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2790, in run_scheduler_process',
            "RuntimeError: CUDA error: out of memory",
        ]
    )
    assert (s.engine, s.state) == ("sglang", "crashed")
    assert s.crash.summary == "RuntimeError: CUDA error: out of memory"
