"""SGLang's piecewise CUDA graph failures: its own line and root cause are the cause
shown, and its advice is offered as a flag change (the remedy), in `replay`, the
events and `wait`'s message. Lines in each shape SGLang prints them (0.5.x
`enable_piecewise_cuda_graph`'s logger.error, then its advice, unstamped)."""

import io

import pytest

from sgwatch.cli.replay import read_log
from sgwatch.control import flagedit
from sgwatch.core.cmdline import parse
from sgwatch.core.events import Remedy
from sgwatch.engines.sglang.catalog import bundled
from sgwatch.live.records import to_line
from tests.unit.test_headless_events import live

STAMP = "[2026-05-22 04:54:32 TP6]"
ARGS = "[2026-05-22 04:50:00 TP0] server_args=ServerArgs(model_path='m', tp_size=8{extra})"
CAUSE = "Tensor match failed for Tensor<8>[strides=<1>, dtype=int64] at fused_store.cuh:107"
ON_BY_DEFAULT = [
    "Piecewise CUDA Graph is enabled by default as an experimental feature.",
    "To work around this error, add --disable-piecewise-cuda-graph to your launch command.",
    "Please report this issue at https://github.com/sgl-project/sglang/issues/new/choose",
]
OPT_IN = [
    "Possible solutions:",
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
    "2. set --piecewise-cuda-graph-max-tokens to a smaller value (e.g., 512)",
    "3. disable Piecewise CUDA graph by unset --enable-piecewise-cuda-graph",
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose ",
]
TRACEBACK = [
    f"{STAMP} Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/w/python/sglang/srt/managers/scheduler.py", line 3811, in run_scheduler_process',
    "    scheduler = Scheduler(",
    '  File "/w/python/sglang/srt/model_executor/model_runner.py", line 900, in init_piecewise_cuda_graphs',  # noqa: E501
    "    self.piecewise_cuda_graph_runner = PiecewiseCudaGraphRunner(self)",
    '  File "/w/python/sglang/srt/model_executor/piecewise_cuda_graph_runner.py", line 300, in capture',  # noqa: E501
    "    self.capture_one_batch_size(num_tokens)",
    f"RuntimeError: {CAUSE}",
    "- Root cause: Size mismatch for shape#0('num_tokens'): expected 6 but got 8",
    "",
    "[2026-05-22 04:54:33] Received sigquit from a child process. It usually means the child failed.",  # noqa: E501
]


def log(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


UNFORCED = ", disable_piecewise_cuda_graph=False, enforce_piecewise_cuda_graph=False"


def failure(root_cause: bool, advice: list[str], extra: str | None = UNFORCED) -> bytes:
    """`extra`: the dump's settings after the model's; None: no dump in the log."""
    first = [
        *([] if extra is None else [ARGS.format(extra=extra)]),
        "[2026-05-22 04:54:00 TP0] Capture piecewise CUDA graph begin. avail mem=70.00 GB",
        f"{STAMP} Piecewise CUDA Graph failed with error: {CAUSE}",
    ]
    cause = ["- Root cause: Size mismatch for shape#0('num_tokens'): expected 6 but got 8"]
    return log(*first, *(cause if root_cause else []), *advice, *TRACEBACK)


@pytest.mark.parametrize("root_cause", [True, False])
def test_the_cause_is_sglangs_own_line_and_root_cause_not_the_scheduler(root_cause):
    crash = read_log(io.BytesIO(failure(root_cause, ON_BY_DEFAULT))).crash
    assert crash.summary.startswith(f"Piecewise CUDA Graph failed with error: {CAUSE}")
    assert ("root cause: Size mismatch" in crash.summary) is root_cause
    assert crash.exception == "RuntimeError"  # the traceback's, which does not replace it
    assert crash.phase == "capturing_graphs"
    assert crash.exit_code == 137
    assert crash.remedy.model_dump() == {
        "advice": "add --disable-piecewise-cuda-graph",
        "add": [["--disable-piecewise-cuda-graph"]],
        "drop": [],
    }


def test_a_run_given_enforce_must_drop_it_for_the_disable_to_count():
    dump = ", disable_piecewise_cuda_graph=False, enforce_piecewise_cuda_graph=True"
    remedy = read_log(io.BytesIO(failure(True, ON_BY_DEFAULT, dump))).crash.remedy
    assert (
        remedy.advice == "drop --enforce-piecewise-cuda-graph, add --disable-piecewise-cuda-graph"
    )
    assert remedy.drop == ["--enforce-piecewise-cuda-graph"]


def test_an_opt_in_release_says_to_unset_its_enable_flag():
    remedy = read_log(io.BytesIO(failure(False, OPT_IN))).crash.remedy
    assert remedy.advice == "drop --enable-piecewise-cuda-graph"
    assert (remedy.add, remedy.drop) == ([], ["--enable-piecewise-cuda-graph"])


def test_a_release_without_the_piecewise_switches_has_no_remedy():
    dump = ", cuda_graph_backend_prefill='tc_piecewise'"
    crash = read_log(io.BytesIO(failure(True, ON_BY_DEFAULT, dump))).crash
    assert crash.summary.startswith("Piecewise CUDA Graph failed") and crash.remedy is None


def test_events_and_wait_carry_the_cause_and_the_restart_that_applies_the_fix():
    # No settings dump: whether the run was given --enforce-... is unknown, so the
    # restart takes it out where the command has it (a no-op where it has not).
    _, events = live(failure(True, ON_BY_DEFAULT, extra=None), hold_crash=True)
    (crash,) = [e for e in events if e["event"] == "crash"]  # once its advice is read
    assert "root cause: Size mismatch" in crash["summary"]
    assert crash["remedy"]["add"] == [["--disable-piecewise-cuda-graph"]]
    first, fix = to_line(crash).splitlines()
    assert first.endswith(f"CRASHED during capturing_graphs: {crash['summary']}")
    assert fix == (
        "  fix: add --disable-piecewise-cuda-graph: sgwatch restart ct129 "
        "--unset enforce-piecewise-cuda-graph --enable disable-piecewise-cuda-graph"
    )


def test_the_remedy_applies_to_the_running_command():
    dump = ", disable_piecewise_cuda_graph=False, enforce_piecewise_cuda_graph=True"
    remedy = read_log(io.BytesIO(failure(True, ON_BY_DEFAULT, dump))).crash.remedy
    catalog = next(c for c in bundled() if c.version == "0.5.10")
    cmd = parse(["python", "-m", "sglang.launch_server", "--model-path", "m",
                 "--enforce-piecewise-cuda-graph", "--tp", "8"])  # fmt: skip
    fixed = flagedit.apply_remedy(
        cmd, Remedy(remedy.advice, tuple(map(tuple, remedy.add)), tuple(remedy.drop)), catalog
    )
    assert flagedit.describe_changes(cmd, fixed, catalog) == [
        "- --enforce-piecewise-cuda-graph",
        "+ --disable-piecewise-cuda-graph",
    ]
