"""Pieces of lines only SGLang prints: which engine wrote a log (Engine.wrote)."""

from __future__ import annotations

MARKERS = (
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
