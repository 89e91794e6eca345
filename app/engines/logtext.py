"""Log text both engines' parsers read alike: Python's own records (a traceback's
frame lines, argparse's error line), uvicorn's access line, and a number that a
pattern finds. Pure."""

from __future__ import annotations

import re

# uvicorn's access line after its `INFO:     `: client, method, path, status.
ACCESS = re.compile(r'(\S+) - "(\w+) (\S+) HTTP/[\d.]+" (\d{3})')
ARGPARSE_ERROR = re.compile(r"[\w./ -]+: error: .+")
_FRAME = re.compile(r'  File "(?:[^"]*/)?([^"/]+)", line (\d+), in (\S+)')


def frame_at(line: str) -> str:
    """Where a traceback's `  File "…", line N, in F` line points: "file.py:N in F",
    or "" when the line is cut."""
    frame = _FRAME.match(line)
    return f"{frame[1]}:{frame[2]} in {frame[3]}" if frame else ""


def first_float(pattern: re.Pattern[str], text: str) -> float | None:
    """The number in `pattern`'s first group at its first match in `text`."""
    m = pattern.search(text)
    return float(m[1]) if m else None
