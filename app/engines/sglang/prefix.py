"""SGLang's line prefix: `[2026-01-01 10:00:00 DP1 TP3] message`.

Variants seen across versions: no rank tag (tp=1), rank tags in any order
(DP, PP, ATTN_CP, MOE_DP, TP, EP), milliseconds (SGLANG_LOG_MS=1), time only
(`[22:30:32 TP0]`, 0.3.x), a level and source after the bracket
(`[ts] INFO utils.py:148: message`, 0.5.9), and the whole line wrapped by
another logger (`(SGLangWorker pid=1107016) [ts TP0] message` from Ray).

A line whose first characters were lost (a paste, a cut buffer, two writers racing
for the terminal) keeps the rest of its prefix: `26-01-10 08:00:00.120 DP1 TP3] msg`.
`split_cut_prefix` reads the ranks and message of such a line; its stamp is no time.
"""

from __future__ import annotations

import re

_BRACKET = re.compile(
    r"\[((?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?:\.\d{1,6})?)((?: [A-Z][A-Z_]*\d+)*)\] ?"
)
_LEVELS = ("DEBUG ", "INFO ", "WARNING ", "ERROR ", "CRITICAL ")
_LEVEL_SOURCE = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.<>-]+:\d+: ")
# How far into a line a wrapped prefix may start.
_WRAP_REACH = 160
# The stamp `[YYYY-MM-DD HH:MM:SS`, one piece a character: a cut line begins with any
# of its tails that still holds the minute's last digit and the seconds (`0:00`), or
# with the rank tags alone when only they are left.
_STAMP_PIECES = (r"\[", *[r"\d"] * 4, "-", r"\d", r"\d", "-", r"\d", r"\d", " ",
                 r"\d", r"\d", ":", r"\d", r"\d", ":", r"\d", r"\d")  # fmt: skip
_TAILS = "|".join("".join(_STAMP_PIECES[i:]) for i in range(1, len(_STAMP_PIECES) - 3))
_RANK_TAG = r"(?:DP|PP|ATTN_CP|MOE_DP|TP|EP)\d+"
_CUT = re.compile(
    rf"(?:(?:{_TAILS})(?:\.\d{{1,6}})?((?: [A-Z][A-Z_]*\d+)*)|({_RANK_TAG}(?: {_RANK_TAG})*))"
    r"\] (?=\S)"
)


def split_prefix(line: str) -> tuple[str, str | None, str] | None:
    """(ts, rank, message) of an SGLang record, or None for a line without a prefix.

    ts is the stamp as logged ("2026-01-01 10:00:00[.123]", or "10:00:00" when
    the log prints no date); rank is "TP3", "DP1 TP3" or None.
    """
    if line.startswith("["):
        m = _BRACKET.match(line)
    elif "] " in line[:_WRAP_REACH]:
        m = _BRACKET.search(line, 0, _WRAP_REACH)
    else:
        return None
    if m is None:
        return None
    ts, ranks = m.group(1, 2)
    return ts, (ranks[1:] or None), _strip_level(line[m.end() :])


def _strip_level(message: str) -> str:
    if message.startswith(_LEVELS) and (lm := _LEVEL_SOURCE.match(message)):
        return message[lm.end() :]
    return message


def split_cut_prefix(line: str) -> tuple[str | None, str] | None:
    """(rank, message) of a record whose prefix lost its first characters, or None."""
    m = _CUT.match(line)
    if m is None:
        return None
    ranks = m[1][1:] if m[1] else m[2]
    return ranks or None, _strip_level(line[m.end() :])
