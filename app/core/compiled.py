"""The compiled fast paths of the log pipeline (core/_scan.c), or None.

The install builds them where a C compiler is at hand and goes on without
them where not; each has a pure-Python twin giving the same results, slower
(docs/PERFORMANCE.md). Callers read `compiled.scan` at each call, so tests
can run the pure-Python paths by setting it to None.
"""

from __future__ import annotations

from types import ModuleType

scan: ModuleType | None
try:
    from sgwatch.core import _scan as scan
except ImportError:  # pragma: no cover - depends on the install
    scan = None
