"""vLLM's line prefix: `(EngineCore_DP0 pid=441) INFO 11-24 11:43:54 [core.py:76] message`.

Variants seen across versions (docs/design/log-formats.md, the corpus's vllm-* logs):
  - the process tag: `(APIServer pid=N)`, `(EngineCore_DP0 pid=N)`,
    `(Worker_DP0_TP1_EP1 pid=N)`, `(VllmWorker rank=1 pid=N)` (0.8),
    `(VllmWorkerProcess pid=N)` (V0), Ray's `(RayWorkerWrapper pid=N, ip=...)`,
    0.10's `(EngineCore_0 pid=N)` (data-parallel rank 0) and `(VllmWorker TP1 pid=N)`
    (`PP1_TP3` with pipeline stages); absent on the V0 driver and on lines printed
    before the process names itself;
  - two tags: a worker under its engine core (`(EngineCore_0 pid=1) (VllmWorker TP1
    pid=2) INFO ...`: the worker's ranks within the core's), or processes racing
    (`(Worker_TP2 pid=1) (Worker_TP6 pid=2) INFO ...`); the message is the last tag's;
  - the stamp `LEVEL MM-DD HH:MM:SS [file.py:123] ` (V1), `LEVEL MM-DD HH:MM:SS
    file.py:123] ` (V0 up to 0.6); no year, so the time alone is kept;
  - colour codes around the tag, with the escape byte or without it when a
    paste stripped it (`[0;36m(Worker_TP2 pid=481418)[0;0m ...`);
  - a tag and no stamp: uvicorn's own lines (`INFO:     Application startup
    complete.`), traceback lines, tqdm frames and bare tags.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from sgwatch.engines import outerprefix

_TAG = re.compile(
    r"\((\w+)((?: (?:rank=\d+|[A-Z]+\d+(?:_[A-Z]+\d+)*))*) pid=(\d+)(?:, ip=[^)]*)?\) ?"
)
_STAMP = re.compile(
    r"(DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d (\d\d:\d\d:\d\d)(?:\.\d+)? "
    r"\[?([^\]\s]+):\d+\] ?"
)
_COLOUR = re.compile(r"\x1b?\[[0-9;]*m")
_COLOUR_STARTS = ("\x1b[", "[0;", "[1;", "[0m")
_RANK_PART = re.compile(r"[A-Z]+\d+")
_RANK_EQ = re.compile(r"rank=(\d+)")
_CORE_INDEX = re.compile(r"EngineCore_(\d+)$")  # 0.10: the data-parallel rank


def clean(line: str) -> str:
    """The line without colour codes (only a line that starts with one is searched)."""
    return _COLOUR.sub("", line) if line.startswith(_COLOUR_STARTS) else line


class Record(NamedTuple):
    """A vLLM line's prefix, read; ts, level and source are None for a tag without
    a stamp, process for a stamp without a tag."""

    ts: str | None
    rank: str | None
    level: str | None
    source: str | None  # the file that logged it: "core.py"
    process: str | None  # the last tag's process name: "VllmWorker", "EngineCore_DP0"
    message: str


def split(line: str) -> Record | None:
    """The prefix of a line with a tag or a stamp, else None.

    The rank is the tag's parallel ranks (`Worker_DP0_TP1_EP1` -> "DP0 TP1 EP1",
    `VllmWorker rank=1` and `VllmWorker TP1` -> "TP1", `EngineCore_DP1` and
    `EngineCore_1` -> "DP1"), `pid N` for a worker named by its process id only,
    and None for the API server and the V0 driver.
    """
    rank = process = None
    pos = 0
    if line.startswith("("):
        core = None  # the data-parallel rank of an engine core tag before this one
        while (tag := _TAG.match(line, pos)) is not None:
            pos, rank = tag.end(), _rank(tag)
            if core and rank and not rank.startswith(("DP", "pid")):
                rank = f"{core} {rank}"  # a worker of that engine core
            process = tag[1]
            core = rank if process.startswith("EngineCore") else None
        if pos == 0:
            return None
    stamp = _STAMP.match(line, pos)
    if stamp is None:
        return Record(None, rank, None, None, process, line[pos:]) if pos else None
    return Record(stamp[2], rank, stamp[1], stamp[3], process, line[stamp.end() :])


def split_prefix(line: str) -> tuple[str, str | None, str] | None:
    """(ts, rank, message) of a vLLM record, as engines.split_prefix reads every engine's;
    ts is "" for a tagged record without a stamp (uvicorn, tracebacks)."""
    found = split(clean(outerprefix.strip(line)))
    if found is None:
        return None
    return found.ts or "", found.rank, found.message


def _rank(tag: re.Match[str]) -> str | None:
    name, ranks, pid = tag.group(1, 2, 3)
    if ranks:
        parts = [f"TP{m[1]}" if (m := _RANK_EQ.fullmatch(p)) else p for p in ranks.split()]
        return " ".join(q for p in parts for q in p.split("_"))
    if m := _CORE_INDEX.match(name):
        return f"DP{m[1]}"
    parts = _RANK_PART.findall(name.replace("_", " "))
    if parts:
        return " ".join(parts)
    if name.startswith(("APIServer", "EngineCore")):
        return None
    return f"pid {pid}"
