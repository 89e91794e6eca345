"""Give the C heap's free pages back to the system now and then.

Python takes every block over 512 bytes from the C library's malloc: a read of a log
(up to 1 MiB at a time), the text decoded from it, a long log's past read again after
a restart or a rotation. glibc's malloc gives memory back to the system only from the
top of its heap, and after the first large block freed it serves large blocks from
the heap too (its mmap threshold rises), so such a burst leaves megabytes free inside
the heap, still resident: in the soak (docs/RELIABILITY.md) RSS rose by 1-5 MB in
single steps at those moments and stayed there. `malloc_trim(0)` hands every whole
free page back, in a few milliseconds. A C library without it (musl, macOS): nothing.

The trim cannot give back a free chunk smaller than a page, nor the pages a large block
shares with its neighbours, and such room grew for hours (a third of the soak's growth
after its first cycle of events). So blocks of MAP_ALONE_FROM and more get mappings of
their own, unmapped whole when freed: the threshold set once, glibc no longer raises it.
In two pairs of soaks the heap's free room after two hours was half (3.2 MB against
7.6) at the same CPU, and RSS ended 0.3 and 1.9 MB lower.
"""

from __future__ import annotations

import ctypes

TRIM_EVERY_S = 60.0
MAP_ALONE_FROM = 32 << 10  # bytes; glibc's own start is 128 KiB, raised as blocks are freed
M_MMAP_THRESHOLD = -3  # glibc's malloc.h


def _libc(name: str):
    try:
        return getattr(ctypes.CDLL(None), name)  # the process's own symbols: its C library's
    except (OSError, AttributeError):
        return None


_TRIM, _MALLOPT = _libc("malloc_trim"), _libc("mallopt")


def map_large_blocks_alone() -> bool:
    """Serve blocks of MAP_ALONE_FROM bytes and more from mappings of their own, for the
    rest of the process; whether the C library took it."""
    return _MALLOPT is not None and bool(_MALLOPT(M_MMAP_THRESHOLD, MAP_ALONE_FROM))


def trim() -> bool:
    """Give the heap's free pages back; whether any were."""
    return _TRIM is not None and bool(_TRIM(0))
