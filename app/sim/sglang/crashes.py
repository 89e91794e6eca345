"""The tracebacks the simulated server dies with, shaped like SGLang's.

A scheduler that fails logs `Scheduler hit an exception: Traceback ...` (one
record whose later lines carry no prefix), then the parent logs `Received
sigquit from a child process...` and SIGKILLs its own tree: exit status 137.
A bad flag combination fails earlier, in the main process, as a plain Python
traceback (exit status 1). Frame lists are abridged; the file and function
names follow SGLang's source layout so a reader sees where it failed.
"""

from __future__ import annotations

SITE = "/usr/local/lib/python3.12/dist-packages/sglang"
SIGQUIT_FROM_CHILD = "Received sigquit from a child process. It usually means the child failed."

_OLD_SUGGESTIONS = (
    "Possible solutions:\n"
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n"
    "3. disable torch compile by not using --enable-torch-compile\n"
    "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n"
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose "
)
_NEW_SUGGESTIONS = (
    "Possible solutions:\n"
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    "2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)\n"
    "3. disable decode CUDA graph by --cuda-graph-backend-decode=disabled. "
    "(Not recommended. Huge performance loss)\n"
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose "
)
_PREFILL_SUGGESTIONS = (
    "Fail when using backend: breakable for prefill runner.\n"
    "Possible suggestions:\n"
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    "2. set --cuda-graph-max-bs-prefill to a smaller value (e.g., 2048)\n"
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose "
)


def _scheduler_frames(new: bool) -> list[str]:
    return [
        f'  File "{SITE}/srt/managers/scheduler.py", line {3958 if new else 2403}, '
        "in run_scheduler_process",
        "    scheduler = Scheduler(",
        "                ^^^^^^^^^^",
        f'  File "{SITE}/srt/managers/scheduler.py", line {433 if new else 312}, in __init__',
        "    self.init_model_worker()",
        f'  File "{SITE}/srt/managers/tp_worker.py", line {260 if new else 81}, in __init__',
        "    self._init_model_runner()" if new else "    self.model_runner = ModelRunner(",
        f'  File "{SITE}/srt/model_executor/model_runner.py", line {526 if new else 232}, '
        "in __init__",
        "    self.initialize(pre_model_load_memory)",
    ]


def capture_oom(kind: str, fmt: str, oom: str) -> str:
    """`Scheduler hit an exception: ...` for a graph capture that ran out of memory."""
    new = fmt == "0.5.23"
    if kind == "prefill":
        runner, call = "prefill_cuda_graph_runner.py", "init_prefill_cuda_graphs"
        header, tail = "Capture prefill CUDA graph failed", _PREFILL_SUGGESTIONS
    else:
        runner = "runner/decode_cuda_graph_runner.py" if new else "cuda_graph_runner.py"
        call, header = "init_device_graphs", "Capture cuda graph failed"
        tail = _NEW_SUGGESTIONS if new else _OLD_SUGGESTIONS
    path = f"{SITE}/srt/model_executor/{runner}"
    first = [
        "Traceback (most recent call last):",
        f'  File "{path}", line {591 if new else 392}, in __init__',
        "    self.capture()",
        f'  File "{path}", line {640 if new else 498}, in capture',
        "    ) = self.capture_one_batch_size(bs, forward)",
        "        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f"torch.OutOfMemoryError: {oom}",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
    ]
    second = [
        "Traceback (most recent call last):",
        *_scheduler_frames(new),
        f'  File "{SITE}/srt/model_executor/model_runner.py", line {741 if new else 318}, '
        "in initialize",
        f"    self.{call}()",
        f'  File "{path}", line {603 if new else 394}, in __init__',
        "    raise Exception(",
        f"Exception: {header}: {oom}",
        tail,
    ]
    return "Scheduler hit an exception: " + "\n".join(first + second)


def not_enough_memory(fmt: str, mem_fraction: float) -> str:
    new = fmt == "0.5.23"
    where = (
        f'  File "{SITE}/srt/model_executor/pool_configurator.py", line 96, in configure'
        if new
        else f'  File "{SITE}/srt/model_executor/model_runner.py", line 1046, in init_memory_pool'
    )
    message = "Not enough memory. Please try to increase --mem-fraction-static."
    if new:
        message += f" Current value: mem_fraction_static={mem_fraction}"
    lines = [
        "Traceback (most recent call last):",
        *_scheduler_frames(new),
        f'  File "{SITE}/srt/model_executor/model_runner.py", line {736 if new else 315}, '
        "in initialize",
        "    self.init_memory_pool(pre_model_load_memory)",
        where,
        "    raise RuntimeError(",
        f"RuntimeError: {message}",
        "",
    ]
    return "Scheduler hit an exception: " + "\n".join(lines)


def weights_oom(fmt: str, oom: str) -> str:
    new = fmt == "0.5.23"
    lines = [
        "Traceback (most recent call last):",
        *_scheduler_frames(new),
        f'  File "{SITE}/srt/model_executor/model_runner.py", line {694 if new else 296}, '
        "in initialize",
        "    self.load_model()",
        f'  File "{SITE}/srt/model_loader/loader.py", line 593, in load_model',
        "    model = _initialize_model(",
        f"torch.OutOfMemoryError: {oom}",
        "",
    ]
    return "Scheduler hit an exception: " + "\n".join(lines)


def invalid_args(message: str) -> list[str]:
    """A resolution error: a main-process traceback before any server_args line."""
    return [
        "Traceback (most recent call last):",
        '  File "<frozen runpy>", line 198, in _run_module_as_main',
        '  File "<frozen runpy>", line 88, in _run_code',
        f'  File "{SITE}/launch_server.py", line 28, in <module>',
        "    server_args = prepare_server_args(sys.argv[1:])",
        "                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{SITE}/srt/server_args.py", line 5309, in prepare_server_args',
        "    return ServerArgs.from_cli_args(raw_args)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{SITE}/srt/server_args.py", line 717, in __post_init__',
        "    self.check_server_args()",
        f'  File "{SITE}/srt/server_args.py", line 4733, in check_server_args',
        "    raise ValueError(",
        f"ValueError: {message}",
    ]


def kill_process_tree(pid: int, include_parent: bool) -> str:
    return f"kill_process_tree called: parent_pid={pid}, include_parent={include_parent}, pid={pid}"
