"""torch.compile's own lines, which vLLM prints and SGLang's piecewise backend (a port
of vLLM's) prints alike: whether a run's compiled graphs came from the compile cache
(docs/design/log-formats.md, "Compile cache"). Pure.

- hit: `Directly load the compiled graph(s) for {dynamic shape | shape N | compile
  range (1, 8192)} from the cache, took X s`
- miss: `Compiling a graph for {dynamic shape | shape N | compile range (...)} takes X s`
- a cached artifact that would not load: `Compiling model again due to a load failure
  from PATH, reason: ...` (a miss: it compiles anew)
- its whole time, either way: `torch.compile takes X s in total` (newer: `took`)
"""

from __future__ import annotations

import re

from sgwatch.core import events as ev

_HIT = re.compile(
    r"Directly load the compiled graph\(s\) for .*? from the cache, took (\d+(?:\.\d+)?) ?s"
)
_MISS = re.compile(r"Compiling a graph for .*? takes (\d+(?:\.\d+)?) ?s")
_TOTAL = re.compile(r"torch\.compile (?:takes|took) (\d+(?:\.\d+)?) ?s in total")
_RECOMPILE = "Compiling model again due to a load failure"
STARTS = (
    "Directly load the compiled graph",
    "Compiling a graph for",
    "torch.compile t",
    _RECOMPILE,
)


def compiled(msg: str, ts: str | None, rank: str | None) -> ev.Compiled | None:
    """The Compiled event a message is, if it is one of those lines (`msg` starts with
    one of STARTS: the caller's cheap test)."""
    if (m := _HIT.match(msg)) is not None:
        return ev.Compiled(ts, rank, "hit", float(m[1]))
    if (m := _MISS.match(msg)) is not None:
        return ev.Compiled(ts, rank, "miss", float(m[1]))
    if msg.startswith(_RECOMPILE):
        return ev.Compiled(ts, rank, "miss", None)
    if (m := _TOTAL.match(msg)) is not None:
        return ev.Compiled(ts, rank, None, float(m[1]), total=True)
    return None
