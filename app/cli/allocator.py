"""Run the dashboard on the C library's allocator, with Python's own turned off.

Python's small-object allocator (pymalloc) takes memory from the system in 1 MiB arenas
and gives an arena back only when every object in it has been freed; a page of an arena,
once touched, stays resident while the arena lives. A dashboard frees nearly all it
builds, but a few long-lived objects land in most arenas, so its resident size follows
the highest point its small objects ever reached, and rare higher peaks keep raising it
for hours (docs/RELIABILITY.md, the soak). Under `PYTHONMALLOC=malloc` every object comes
from the C library's malloc, whose free pages the dashboard's heap trim
(sgwatch.ui.heap) hands back once a minute.

The interpreter reads the variable only as it starts, so the dashboard executes itself
again with it set, as it was started (same pid, terminal, signals and arguments), and
then takes it out of its environment, so that what it starts (a server on this machine,
the demo's) runs on the allocator it would have had. A value the user set is kept:
`PYTHONMALLOC=pymalloc` runs the dashboard on Python's allocator.
"""

from __future__ import annotations

import os
import sys

from sgwatch.ui import heap

MARK = "SGWATCH_C_MALLOC"  # set with the variable by the exec: this process's, not the user's


def run_on_c_malloc() -> None:
    """Execute this process again under PYTHONMALLOC=malloc; return once it runs so (or if
    it cannot: the user's own value, no heap trim to hand pages back, the exec failed)."""
    if os.environ.pop(MARK, None):
        del os.environ["PYTHONMALLOC"]
        return
    if "PYTHONMALLOC" in os.environ or not heap.available():
        return
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(
            sys.executable, sys.orig_argv, {**os.environ, "PYTHONMALLOC": "malloc", MARK: "1"}
        )
    except OSError:
        return
