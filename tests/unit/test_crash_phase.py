"""A crash's phase is where the run was (serving included) or where its traceback's
frames say it was, never "starting" by default; `replay`, the events and `wait`
read the same phase. Tracebacks in SGLang's shapes: a scheduler's, and a bare one
whose exception line is missing (a log cut short)."""

import io

import pytest

from sgwatch.cli.replay import read_log
from sgwatch.live.records import to_line
from tests.unit.test_headless_events import live

T = "[2026-03-01 09:00:{:02d} TP0]"
SCHEDULER = '  File "/opt/python/sglang/srt/managers/scheduler.py", line {n}, in {func}'
RUNNER = '  File "/opt/python/sglang/srt/model_executor/model_runner.py", line {n}, in {func}'


def frames(*funcs: str) -> list[str]:
    out = [SCHEDULER.format(n=3000, func="run_scheduler_process")]
    for i, func in enumerate(funcs):
        where = SCHEDULER if "event_loop" in func else RUNNER
        out += [where.format(n=100 + i, func=func), f"    self.{func}()"]
    return out


def crash_log(before: list[str], funcs: tuple[str, ...], exception: bool = True) -> bytes:
    lines = [
        *before,
        f"{T.format(30)} Scheduler hit an exception: Traceback (most recent call last):",
        *frames(*funcs),
        *(
            ["RuntimeError: CUDA error: an illegal memory access was encountered"]
            if exception
            else []
        ),
    ]
    return ("\n".join(lines) + "\n").encode()


SERVING = [
    f"{T.format(1)} Load weight begin. avail mem=70.00 GB",
    f"{T.format(9)} The server is fired up and ready to roll!",
    f"{T.format(20)} Decode batch, #running-req: 1, #token: 41, token usage: 0.00, "
    "cuda graph: True, gen throughput (token/s): 112.58, #queue-req: 0,",
]
CAPTURING = [f"{T.format(5)} Capture cuda graph begin. This can take up to several minutes."]


@pytest.mark.parametrize(
    ("before", "funcs", "phase"),
    [
        # no line before the crash tells: the frames do
        ([], ("__init__", "initialize", "init_cuda_graphs", "capture"), "capturing_graphs"),
        ([], ("initialize", "capture_model"), "capturing_graphs"),
        ([], ("initialize", "init_memory_pool"), "allocating_kv_cache"),
        ([], ("initialize", "load_model"), "loading_weights"),
        ([], ("initialize", "init_piecewise_cuda_graphs", "warmup_compile"), "compiling"),
        # the event loop is serving, whatever runs inside it
        ([], ("run_event_loop", "event_loop_overlap", "capture"), "serving"),
        # frames that name no phase: where the run was
        (SERVING, ("run_batch", "forward"), "serving"),
        (CAPTURING, ("forward",), "capturing_graphs"),
        # the frames say more than the state: a serving run's event loop
        (CAPTURING, ("event_loop_normal",), "serving"),
    ],
)
def test_the_phase_replay_events_and_wait_show(before, funcs, phase):
    data = crash_log(before, funcs)
    assert read_log(io.BytesIO(data)).crash.phase == phase
    _, events = live(data, hold_crash=True)
    (crash,) = [e for e in events if e["event"] == "crash"]
    assert crash["phase"] == phase
    assert f"CRASHED during {phase}: RuntimeError: CUDA error" in to_line(crash)


def test_a_traceback_cut_before_its_exception_line_still_says_where():
    data = crash_log([], ("initialize", "init_memory_pool"), exception=False)
    crash = read_log(io.BytesIO(data)).crash
    assert (crash.summary, crash.phase) == ("Scheduler hit an exception", "allocating_kv_cache")


def test_a_later_traceback_frame_outside_sglang_says_nothing():
    lines = [
        f"{T.format(30)} Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/usr/lib/python3/site-packages/torch/nn/module.py", line 1, in load_model',
        "RuntimeError: boom",
    ]
    crash = read_log(io.BytesIO(("\n".join(lines) + "\n").encode())).crash
    assert crash.phase == "starting"  # torch's own `load_model` is not SGLang's phase
