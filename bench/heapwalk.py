"""What lies beside the holes in the C heap: a walk of glibc's main heap from inside the
process, chunk by chunk, naming the blocks next to each free one.

A free chunk inside the heap stays resident (the trim gives back only its whole pages)
until a block of its size comes, and the heap cannot shrink below a block still in use
above it. So the blocks beside the larger holes say what keeps them: each in-use block
is named by the Python type found at its start (a str or bytes object: its first
characters too; a block with a collector's header before the object: that object's
type), else "raw" (a dict's table, a list's items, a C library's own block).

glibc's layout (64-bit): a chunk is its previous chunk's size (8 bytes), its own size
with three flag bits (8), then the block; the next chunk's lowest flag says whether this
one is in use. Chunks freed into glibc's per-thread caches and fast bins still read as
in use: the holes named here are the ones glibc merged and binned. The walk makes no
allocation of its own in the heap while it reads (its record is sized beforehand and
mapped alone); other threads allocate from their own arenas.

    from heapwalk import walk; walk()   # {"holes": ..., "beside": ...}  (soak_app.py)
"""

from __future__ import annotations

import array
import collections
import ctypes
import gc
import sys

MIN_HOLE = 1 << 10  # bytes: smaller free chunks are left out of the naming
MAX_CHUNKS = 1 << 19
_SIZE = ctypes.c_size_t
_STR_DATA, _BYTES_DATA = sys.getsizeof("") - 1, sys.getsizeof(b"") - 1  # 48, 32 on 3.11
_GC_HEAD = 16  # bytes of the collector's header before a tracked object (CPython 3.11)


def heap_bounds() -> tuple[int, int]:
    with open("/proc/self/maps") as maps:
        for line in maps:
            if line.rstrip().endswith("[heap]"):
                lo, hi = line.split()[0].split("-")
                return int(lo, 16), int(hi, 16)
    raise RuntimeError("no [heap] mapping")


def _types() -> dict[int, str]:
    """Every class the process knows, by its address: what a block's type word may be."""
    out: dict[int, str] = {}
    for o in gc.get_objects():
        t = type(o)
        out.setdefault(id(t), t.__qualname__)
    for t in (str, bytes, bytearray, int, float, tuple, list, dict, set, frozenset):
        out[id(t)] = t.__qualname__
    return out


def _name(block: int, types: dict[int, str], snippet: bool) -> str:
    kind = types.get(_SIZE.from_address(block + 8).value)
    if kind in ("str", "bytes") and snippet:
        at = block + (_STR_DATA if kind == "str" else _BYTES_DATA)
        return f"{kind} {ctypes.string_at(at, 48)!r}"
    if kind is not None:
        return kind
    tracked = types.get(_SIZE.from_address(block + _GC_HEAD + 8).value)
    return tracked if tracked is not None else "raw"


def walk(examples: int = 10) -> dict:
    """The heap's free chunks by size class; the blocks beside holes of MIN_HOLE and more
    by type, weighted by the hole's KiB (below it, above it); the largest holes with
    their neighbours (a str's or bytes' first bytes, the block's size)."""
    types = _types()
    lo, hi = heap_bounds()
    chunks = array.array("Q", bytes(8 * 2 * MAX_CHUNKS))  # (address, size|in use) pairs
    n, p = 0, lo
    while p + 16 <= hi and n < MAX_CHUNKS:
        size = _SIZE.from_address(p + 8).value & ~7
        if size < 32 or p + size > hi:
            break  # the top chunk, or not a chunk: the walk ends
        in_use = p + size + 16 > hi or _SIZE.from_address(p + size + 8).value & 1
        chunks[2 * n], chunks[2 * n + 1] = p, size << 1 | bool(in_use)
        n, p = n + 1, p + size
    holes = collections.Counter()
    below, above = collections.Counter(), collections.Counter()
    large = []
    for i in range(n):
        size, in_use = chunks[2 * i + 1] >> 1, chunks[2 * i + 1] & 1
        if in_use:
            continue
        holes["<1k" if size < 1 << 10 else "1-4k" if size < 4 << 10 else ">=4k"] += size >> 10
        if size < MIN_HOLE:
            continue
        if i > 0 and chunks[2 * i - 1] & 1:
            below[_name(chunks[2 * i - 2] + 16, types, False)] += size >> 10
        if i + 1 < n and chunks[2 * i + 3] & 1:
            above[_name(chunks[2 * i + 2] + 16, types, False)] += size >> 10
        large.append((size, i))
    out = []
    for size, i in sorted(large, reverse=True)[:examples]:
        beside = [j for j in (i - 1, i + 1) if 0 <= j < n and chunks[2 * j + 1] & 1]
        named = [[_name(chunks[2 * j] + 16, types, True), chunks[2 * j + 1] >> 1] for j in beside]
        out.append([size >> 10, named])
    return {
        "chunks": n,
        "walked_kb": (p - lo) >> 10,
        "heap_kb": (hi - lo) >> 10,
        "holes_kb": dict(holes),
        "below": below.most_common(8),
        "above": above.most_common(8),
        "largest": out,
    }
