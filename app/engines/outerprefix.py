"""Prefixes that the tool carrying a log puts before every engine's own line.

The engine's record starts after them, in its own format (docs/design/log-formats.md,
"Outer prefixes"):
  - an RFC 3339 stamp: `docker logs -t`, `kubectl logs --timestamps`, log shippers
    (`2026-03-02T10:14:07.118233001Z `, `...+02:00 `), and the CRI log files of a
    Kubernetes node, which add the stream and a partial-line flag (`stdout F `);
  - journald's short formats: `Aug 02 10:14:07 host python3[4411]: ` with the month
    abbreviated in the reader's locale (`août`, `авг`, ` 8月`), `-o short-iso`
    (`2026-08-02T10:14:07+0200 host ...`) and `-o short-precise` (`.123456`);
  - the container's name from `kubectl logs --prefix` (`[pod/p/c] `) and
    `docker compose logs` (`vllm-1  | `);
stacked in any order (`docker compose logs -t`, a journal read through a shipper).
Pure. Every engine reads the line that is left: live/ingest.py strips each line
before it is parsed, the registry's split_prefix before any engine's prefix.
"""

from __future__ import annotations

import re

_RFC3339 = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
_SENDER = r"\S+ [^\s\[\]:]+(?:\[\d+\])?: "  # journald's host and program[pid]
# An RFC 3339 stamp first (the common case, tried first): alone (docker, kubectl),
# with a CRI file's stream and flag, or journald's `-o short-iso` sender (its pid
# required here: `word word: ` alone could be the record's own text).
_STAMPED = _RFC3339 + r" (?:(?:stdout|stderr) [FP] |\S+ [^\s\[\]:]+\[\d+\]: )?"
# journald's `MMM DD HH:MM:SS`, the month in the reader's locale (letters with an
# optional dot, or a number and 月/월).
_JOURNAL = r"(?:[^\W\d_]{2,6}\.?| ?\d{1,2}[月월]) {1,2}\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)? " + _SENDER
_KUBECTL = r"\[pod/[^\]\s]+\] "
_COMPOSE = r"[\w.-]+ +\| "
OUTER = re.compile(f"(?:{_STAMPED}|{_JOURNAL}|{_KUBECTL}|{_COMPOSE})+")

# Lines an Unwrapper tests one by one before it decides a stream has no outer
# prefix (the same reach as the registry's engine detection).
WITHIN = 5000


def strip(line: str) -> str:
    """The line without its outer prefixes (unchanged when it has none)."""
    m = OUTER.match(line)
    return line[m.end() :] if m else line


class Unwrapper:
    """Strips a stream's lines, block by block.

    A tool prefixes every line of a stream or none, so testing each line costs time
    only while it matters: until a prefix is seen, the first WITHIN lines are tested
    one by one, then only each block's first line (a paste that turns prefixed
    half-way is still caught at a block's start); once one is seen, every line is.
    The lines returned are the records, one for each line the tool wrote.
    """

    def __init__(self) -> None:
        self._tested = 0
        self._seen = False

    def lines(self, lines: list[str]) -> list[str]:
        if not lines:
            return lines
        if not self._seen:
            if self._tested < WITHIN:
                head = lines[: WITHIN - self._tested]
                self._tested += len(head)
                self._seen = any(map(OUTER.match, head))
            else:
                self._seen = OUTER.match(lines[0]) is not None
            if not self._seen:
                return lines
        out = []
        for i, line in enumerate(lines):
            m = OUTER.match(line)
            if m is None:
                out.append(line)
            elif m.end() < len(line) or not lines[i + 1 : i + 2] or lines[i + 1][:1] != "[":
                out.append(line[m.end() :])
            # else: the line splitter cut the SGLang record behind this prefix off as a
            # glued one (core/linesplit.py): the record follows, this line was its start
        return out
