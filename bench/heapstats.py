"""How a process's memory is laid out, read from inside it: glibc's heap (mallinfo2, its
free chunks by size), Python's arenas, and the resident pages by kind of mapping. The
soak's dashboard (soak_app.py) and followers (soak_follower.py) and the harness benches
read themselves with these."""

from __future__ import annotations

import ctypes
import os
import sys
import tempfile
import xml.etree.ElementTree as ET

MALLINFO2 = ["arena", "ordblks", "smblks", "hblks", "hblkhd"]
MALLINFO2 += ["usmblks", "fsmblks", "uordblks", "fordblks", "keepcost"]


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in MALLINFO2]


LIBC = ctypes.CDLL("libc.so.6")
LIBC.mallinfo2.restype = _Mallinfo2
LIBC.fdopen.restype = ctypes.c_void_p
LIBC.fdopen.argtypes = [ctypes.c_int, ctypes.c_char_p]
LIBC.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
LIBC.fclose.argtypes = [ctypes.c_void_p]


def allocator() -> dict[str, int]:
    """Where the bytes are, in KiB: glibc's heap (in use, free inside it, mmapped chunks),
    Python's own arenas (pymalloc: small objects) and what is allocated in them."""
    m = LIBC.mallinfo2()
    saved = os.dup(2)
    with tempfile.TemporaryFile("w+") as f:  # _debugmallocstats writes to C's stderr
        os.dup2(f.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        stats = dict(
            (k.strip("# ").strip(), int(v.replace(",", "")))
            for k, _, v in (line.partition("=") for line in f if line.startswith("# "))
            if v.strip().replace(",", "").isdigit()
        )
    return {
        "heap_used": m.uordblks // 1024,
        "heap_free": m.fordblks // 1024,
        "mmapped": m.hblkhd // 1024,
        "py_arenas": stats.get("arenas allocated current", 0),
        "py_used": stats.get("bytes in allocated blocks", 0) // 1024,
    }


FREE_CLASSES = [(1 << 10, "<1k"), (4 << 10, "1-4k"), (32 << 10, "4-32k"), (None, ">=32k")]


def free_chunks() -> dict[str, list[int]]:
    """The C heap's free chunks by size class, all arenas: [KiB, count] each. A free chunk
    under a page can never be trimmed; one over a page is resident only at its edges after
    the dashboard's trim (glibc's malloc_info, read from the XML it writes)."""
    out = {name: [0, 0] for _, name in FREE_CLASSES}
    with tempfile.TemporaryFile("w+b") as f:
        fp = LIBC.fdopen(os.dup(f.fileno()), b"w")
        LIBC.malloc_info(0, fp)
        LIBC.fclose(fp)
        f.seek(0)
        root = ET.fromstring(f.read())
    for arena in root.iter("heap"):
        for size in arena.iterfind("sizes/*"):  # a bin (or the unsorted chunks) and its free chunks
            total, count = int(size.get("total")), int(size.get("count"))
            if count:
                mean = total // count
                name = next(n for top, n in FREE_CLASSES if top is None or mean < top)
                out[name][0] += total // 1024
                out[name][1] += count
    return out


def resident_kb() -> dict[str, int]:
    """Resident KiB by kind of mapping (/proc/self/smaps): the C heap, anonymous maps
    (Python's arenas, large blocks malloc maps alone, stacks) and files."""
    out = {"heap": 0, "anon": 0, "files": 0}
    kind = "files"
    # a line at a time: the whole text split at once was a peak of ~10,000 strings (up
    # to 1.4 MiB traced) in the very heap being measured, every sample
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split(maxsplit=5)
            if "-" in head[0] and ":" not in head[0]:  # a mapping's first line
                name = head[5].rstrip("\n") if len(head) > 5 else ""
                anonymous = not name or name.startswith("[")  # [stack], [vdso]...
                kind = "heap" if name == "[heap]" else "anon" if anonymous else "files"
            elif head[0] == "Rss:":
                out[kind] += int(head[1])
    return out
