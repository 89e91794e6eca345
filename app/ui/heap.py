"""Give the C heap's free pages back to the system now and then.

Python takes every block over 512 bytes from the C library's malloc: a read of a log
(up to 1 MiB at a time), the text decoded from it, a long log's past read again after
a restart or a rotation. glibc's malloc gives memory back to the system only from the
top of its heap, and after the first large block freed it serves large blocks from
the heap too (its mmap threshold rises), so such a burst leaves megabytes free inside
the heap, still resident: in the soak (docs/RELIABILITY.md) RSS rose by 1-5 MB in
single steps at those moments and stayed there. `malloc_trim(0)` hands every whole
free page back, in a few milliseconds. A C library without it (musl, macOS): nothing.
"""

from __future__ import annotations

import ctypes

TRIM_EVERY_S = 60.0


def _malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim  # the process's own symbols: its C library's
    except (OSError, AttributeError):
        return None


_TRIM = _malloc_trim()


def trim() -> bool:
    """Give the heap's free pages back; whether any were."""
    return _TRIM is not None and bool(_TRIM(0))
