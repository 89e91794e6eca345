"""PyTorch's CUDA out-of-memory message, which either engine's traceback ends with."""

from __future__ import annotations


def cuda_oom(gpu: int, want_gib: float, total_gib: float, free_gib: float) -> str:
    """PyTorch's CUDA out-of-memory message."""
    used = total_gib - free_gib
    return (
        f"CUDA out of memory. Tried to allocate {_size(want_gib)}. GPU {gpu} has a total "
        f"capacity of {_size(total_gib)} of which {_size(free_gib)} is free. "
        f"Including non-PyTorch memory, this process has {_size(used)} memory in use. "
        f"Of the allocated memory {_size(used * 0.96)} is allocated by PyTorch, and "
        f"{_size(used * 0.02)} is reserved by PyTorch but unallocated. If reserved but "
        "unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
        "documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
    )


def _size(gib: float) -> str:
    """PyTorch's format_size: MiB below one GiB."""
    return f"{gib:.2f} GiB" if gib >= 1 else f"{gib * 1024:.2f} MiB"
