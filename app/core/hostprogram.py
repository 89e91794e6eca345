"""A program sent to a host over stdin, with the modules it shares with sgwatch inlined.

Nothing of sgwatch is installed on the host, so a program there cannot import it;
yet a few stdlib-only modules serve both sides (a flag catalog's option JSON, facts
of a process from /proc). The program imports such a module as sgwatch would
(`from sgwatch.remote.host_proc import started`), which keeps it runnable and
checked here, and `inline` replaces that line by the module's text when it is sent.
A shared module is stdlib only, for the host's Python (>= 3.8), and has no
`from __future__` import (it lands mid-program).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.resources import files


def inline(program: str, shared: Mapping[str, str]) -> str:
    """`program` with each line `from MODULE import ...` whose MODULE is in `shared`
    (module name -> its source) replaced by that source."""
    out = []
    for line in program.splitlines(keepends=True):
        module = line[len("from ") :].split(" import ", 1)[0] if line.startswith("from ") else ""
        out.append(shared.get(module, line))
    return "".join(out)


def program(package: str, name: str, *shared: str) -> str:
    """The program file `name` of `package` as sent: each module in `shared` (dotted
    names) inlined in place of its import."""
    texts = {}
    for module in shared:
        where, _, leaf = module.rpartition(".")
        texts[module] = files(where).joinpath(f"{leaf}.py").read_text()
    return inline(files(package).joinpath(name).read_text(), texts)
