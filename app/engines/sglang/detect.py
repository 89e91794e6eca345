"""Whether a log line is one only SGLang prints (which engine wrote a log)."""

from __future__ import annotations

_NEEDLES = (
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


def wrote(line: str) -> bool:
    return any(needle in line for needle in _NEEDLES)
