"""Whether a log line is one only vLLM prints (which engine wrote a log).

SGLang's own logs can hold vLLM-style lines (its Ray workers, vLLM's platform
probe), so the registry asks SGLang first.
"""

from __future__ import annotations

_NEEDLES = (
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


def wrote(line: str) -> bool:
    return any(needle in line for needle in _NEEDLES)
