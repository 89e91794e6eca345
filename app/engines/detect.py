"""Which engine wrote a log: decided by the first line only one engine prints."""

from __future__ import annotations

_SGLANG = (
    "server_args=",
    "Decode batch",
    "Prefill batch",
    "fired up and ready to roll",
    "Capture cuda graph",
    "CUDA graph begin",
    "CUDA graph end",
    "Load weight begin",
    "Load weight end",
    "Init torch distributed",
    "KV Cache is allocated",
    "Capturing batches (",
    "sglang.launch_server",
    "launch_server.py",
    "sglang serve",
    "Scheduler hit an exception",
    "sglang/srt/",
    "sglang.srt.",
)
_VLLM = (
    "vLLM API server",
    "(APIServer pid=",
    "(EngineCore",
    "(VllmWorker",
    "(Worker_",
    "Engine 000:",
    "Avg generation throughput",
    "[gpu_model_runner.py",
    "[loggers.py",
    "V1 LLM engine",
    "vLLM is using",
    "vLLM instance",
    "vllm serve",
    "Graph capturing finished",
    "Capturing cudagraphs",
    "# GPU blocks",
    "# cuda blocks",
)


def detect_engine(line: str) -> str | None:
    """ "sglang", "vllm", or None when the line could come from either."""
    for needle in _SGLANG:
        if needle in line:
            return "sglang"
    for needle in _VLLM:
        if needle in line:
            return "vllm"
    return None
