"""SGLang's line prefix: `[2026-01-01 10:00:00 DP1 TP3] message`.

Variants seen across versions: no rank tag (tp=1), rank tags in any order
(DP, PP, ATTN_CP, MOE_DP, TP, EP), milliseconds (SGLANG_LOG_MS=1), time only
(`[22:30:32 TP0]`, 0.3.x), a level and source after the bracket
(`[ts] INFO utils.py:148: message`, 0.5.9), and the whole line wrapped by
another logger (`(SGLangWorker pid=1107016) [ts TP0] message` from Ray).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BRACKET = re.compile(
    r"\[(?:(?P<date>\d{4}-\d\d-\d\d) )?(?P<time>\d\d:\d\d:\d\d)(?:[.,](?P<frac>\d{1,6}))?"
    r"(?P<ranks>(?: [A-Z][A-Z_]*\d+)*)\] ?"
)
_LEVEL_SOURCE = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.<>-]+:\d+: ")
# How far into a line a wrapped prefix may start.
_WRAP_REACH = 160


@dataclass(slots=True)
class Prefix:
    ts: str | None  # ISO-8601: "2026-01-01T10:00:00[.123]" or "10:00:00"
    rank: str | None  # "TP3", "DP1 TP3", None
    message: str


def split_prefix(line: str) -> Prefix | None:
    """The prefix of an SGLang record, or None for a line without one."""
    if line.startswith("["):
        m = _BRACKET.match(line)
    elif "] " in line[:_WRAP_REACH]:
        m = _BRACKET.search(line, 0, _WRAP_REACH)
    else:
        return None
    if m is None:
        return None
    date, time, frac, ranks = m.group("date", "time", "frac", "ranks")
    ts = f"{date}T{time}" if date else time
    if frac:
        ts = f"{ts}.{frac}"
    message = line[m.end() :]
    if message[:1] in "DIWEC" and (lm := _LEVEL_SOURCE.match(message)):
        message = message[lm.end() :]
    return Prefix(ts, ranks.strip() or None, message)
