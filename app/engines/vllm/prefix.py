"""vLLM's line prefix: `(EngineCore_DP0 pid=441) INFO 11-24 11:43:54 [core.py:76] message`.

Variants seen across versions (docs/design/log-formats.md, the corpus's vllm-* logs):
  - the process tag: `(APIServer pid=N)`, `(EngineCore_DP0 pid=N)`,
    `(Worker_DP0_TP1_EP1 pid=N)`, `(VllmWorker rank=1 pid=N)` (0.8),
    `(VllmWorkerProcess pid=N)` (V0), Ray's `(RayWorkerWrapper pid=N, ip=...)`;
    absent on the V0 driver and on lines printed before the process names itself;
    two tags when processes race (`(Worker_TP2 pid=1) (Worker_TP6 pid=2) INFO ...`:
    the message is the last tag's);
  - the stamp `LEVEL MM-DD HH:MM:SS [file.py:123] ` (V1), `LEVEL MM-DD HH:MM:SS
    file.py:123] ` (V0 up to 0.6); no year, so the time alone is kept;
  - colour codes around the tag, with the escape byte or without it when a
    paste stripped it (`[0;36m(Worker_TP2 pid=481418)[0;0m ...`);
  - a tag and no stamp: uvicorn's own lines (`INFO:     Application startup
    complete.`), traceback lines, tqdm frames and bare tags.
"""

from __future__ import annotations

import re

_TAG = re.compile(r"\((\w+)(?: rank=(\d+))? pid=(\d+)(?:, ip=[^)]*)?\) ?")
_STAMP = re.compile(
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d (\d\d:\d\d:\d\d)(?:\.\d+)? "
    r"(?:\[[^\]\s]+:\d+\]|[^\]\s]+:\d+\]) ?"
)
_COLOUR = re.compile(r"\x1b?\[[0-9;]*m")
_COLOUR_STARTS = ("\x1b[", "[0;", "[1;", "[0m")
_RANK_PART = re.compile(r"[A-Z]+\d+")


def clean(line: str) -> str:
    """The line without colour codes (only a line that starts with one is searched)."""
    return _COLOUR.sub("", line) if line.startswith(_COLOUR_STARTS) else line


def split(line: str) -> tuple[str | None, str | None, str] | None:
    """(time or None, rank or None, message) of a line with a tag or a stamp, else None.

    The rank is the tag's parallel ranks (`Worker_DP0_TP1_EP1` -> "DP0 TP1 EP1",
    `VllmWorker rank=1` -> "TP1", `EngineCore_DP1` -> "DP1"), `pid N` for a worker
    named by its process id only, and None for the API server and the V0 driver.
    """
    rank = None
    pos = 0
    if line.startswith("("):
        while (tag := _TAG.match(line, pos)) is not None:
            pos, rank = tag.end(), _rank(tag)
        if pos == 0:
            return None
    stamp = _STAMP.match(line, pos)
    if stamp is None:
        return (None, rank, line[pos:]) if pos else None
    return stamp[1], rank, line[stamp.end() :]


def split_prefix(line: str) -> tuple[str, str | None, str] | None:
    """(ts, rank, message) of a vLLM record, as engines.split_prefix reads every engine's;
    ts is "" for a tagged record without a stamp (uvicorn, tracebacks)."""
    found = split(clean(line))
    if found is None:
        return None
    ts, rank, message = found
    return ts or "", rank, message


def _rank(tag: re.Match[str]) -> str | None:
    name, rank, pid = tag.group(1, 2, 3)
    if rank is not None:
        return f"TP{rank}"
    parts = _RANK_PART.findall(name.replace("_", " "))
    if parts:
        return " ".join(parts)
    if name.startswith(("APIServer", "EngineCore")):
        return None
    return f"pid {pid}"
