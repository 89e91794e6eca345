"""Run code on the pure-Python paths of the log pipeline, and mark the tests
that compare them with the compiled ones (sgwatch.core._scan)."""

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from sgwatch.core import compiled

needs_compiled = pytest.mark.skipif(
    compiled.scan is None,
    reason="sgwatch.core._scan was not built (the install needs a C compiler and Python's headers)",
)


@contextmanager
def pure_python() -> Iterator[None]:
    saved, compiled.scan = compiled.scan, None
    try:
        yield
    finally:
        compiled.scan = saved
