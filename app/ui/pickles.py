"""Styles' meta pickled into blocks of their own size, out of the C heap.

Rich and Textual keep a style's meta (a link's action, and on every segment Textual
renders the cell offset that text selection reads) as pickled bytes. pickle builds its
output in a 4 KiB buffer, which the C library's malloc serves, and shrinks it in place
to its size: a bytes object of about 60 bytes left in an 80-byte block of the C heap,
wherever the buffer was carved, for as long as a rendered line keeps the style. Those
blocks were what lay beside most of the heap's holes in the soak (bench/heapwalk.py):
small blocks that live a while, spread between large ones that come and go, keep the
free room around them from merging and from being given back. Copied, the bytes come
from Python's own allocator (a block of 512 bytes or less), and the buffer is freed at
once, its room whole again.
"""

from __future__ import annotations

import pickle

import rich.style
import textual.style


def _dumps(obj: object, *args: object, **kwargs: object) -> bytes:
    return bytes(memoryview(pickle.dumps(obj, *args, **kwargs)))  # a copy, its own size


def copy_out() -> None:
    """Rich's and Textual's styles pickle their meta into copies from now on."""
    rich.style.dumps = _dumps
    textual.style.dumps = _dumps
