"""Pieces of lines only vLLM prints: which engine wrote a log (Engine.wrote).

SGLang's own logs can hold vLLM-style lines (its Ray workers, vLLM's platform
probe), so the registry asks SGLang first.
"""

from __future__ import annotations

MARKERS = (
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
    "Capturing CUDA graph",  # its bars: a bare excerpt of them is vLLM's
    "Capturing eagle ",
    "Supported tasks: [",
    "Starting vLLM",
    "# GPU blocks",
    "# cuda blocks",
)
