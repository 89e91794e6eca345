"""A program as it is sent to a host: its shared modules inlined, its request filled in.

    source = program("sgwatch.remote.host.follow", {"path": ..., "offset": 0, ...})

Nothing of sgwatch is installed on the host, so a program there cannot import it;
yet a few stdlib-only modules serve both sides (the follower's frames, facts of a
process from /proc, a flag catalog's option JSON). A program imports such a module
as sgwatch would (`from sgwatch.remote.host.proc import started`), which keeps it
runnable and checked here, and each such line is replaced by the module's text. A
shared module is stdlib only, for the host's Python (>= 3.8), and has no
`from __future__` import (it lands mid-program).

A program's inputs are one JSON value, the request: its file holds the line
`REQUEST = None` at module level, and the sent text has `REQUEST = json.loads(...)`
there instead (so the program imports json). The request travels inside the
program, never as separate arguments a shell would parse; a program sent over stdin
(`PYTHON -`: a restart's, whose request holds the server's environment) shows none
of it in a process listing. docs/design/host-programs.md.
"""

from __future__ import annotations

import functools
import json
from importlib.resources import files

_SLOT = "REQUEST = None"
_SHARED = "from sgwatch."


def program(module: str, request: object = None) -> str:
    """The text of `module` (dotted name of a host program) as sent: every
    `from sgwatch.M import ...` line replaced by M's text, and `request` (None: the
    program takes none) written into its slot."""
    out = []
    for line in _read(module).splitlines(keepends=True):
        if line.startswith(_SHARED):
            shared = line[len("from ") :].split(" import ", 1)[0]
            line = _read(shared)
            if any(ln.startswith(_SHARED) for ln in line.splitlines()):
                raise ValueError(f"{shared}: a shared module imports sgwatch itself")
        out.append(line)
    text = "".join(out)
    if request is None:
        return text
    if text.count(f"\n{_SLOT}") != 1:
        raise ValueError(f"{module}: no single line {_SLOT!r} to fill")
    filled = f"REQUEST = json.loads({json.dumps(request)!r})"
    return text.replace(f"\n{_SLOT}", f"\n{filled}", 1)


@functools.cache
def _read(module: str) -> str:
    package, _, leaf = module.rpartition(".")
    return files(package).joinpath(f"{leaf}.py").read_text()
