"""Line families of SGLang's real output (families.toml), and a log cut into records.

A family is a regular expression for one kind of record plus its source: a
file in the shared real-log folder (test_shapes checks the family matches a
record there), or `engines.md` with a literal snippet the reference must
contain, or Python's and uvicorn's own standard texts. A record is one piece of
a log between newlines, carriage returns and glue points (a stamped record
glued onto a tqdm frame, or anything right after a frame's closing bracket).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

# The only prefix the simulator may print: SGLang's default, with TP tags.
PREFIX = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{3})?(?: TP\d+)?\] ")
# Prefixes real logs also carry: time-only stamps, DP/EP tags, a level and
# source after the bracket (0.5.9), a Ray worker wrapper.
REAL_PREFIX = re.compile(
    r"(?:\(\w+ pid=\d+\) )?\[(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?:[.,]\d+)?(?: [A-Z_]+\d+)*\] "
    r"(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.<>-]+:\d+: )?"
)
_GLUED = re.compile(r"(?<=.)(?=\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)|(?<=it/s\])(?=.)|(?<=s/it\])(?=.)")
_STATS = r"\[\d\d:\d\d<(?:\d\d:\d\d|\?), (?: *\d+\.\d\d(?:it/s|s/it)|\?it/s)\]"
MACROS = {
    "{GB}": r"\d+\.\d\d GB",
    "{N}": r"\d+",
    "{LIST}": r"\[\d+(?:, \d+)*\]",
    "{BAR}": r" *\d{1,3}%\|[ ▏▎▍▌▋▊▉█]{10,}\| \d+/\d+ " + _STATS,
    "{LOADING}": r" +\d{1,3}% Completed \| \d+/\d+ " + _STATS,
}


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    regex: re.Pattern[str]
    source: str
    prefixed: bool
    snippet: str

    def matches(self, text: str) -> bool:
        return self.regex.fullmatch(text) is not None


def _load() -> list[Family]:
    doc = tomllib.loads((Path(__file__).parent / "families.toml").read_text())
    out = []
    for f in doc["family"]:
        pattern = f["pattern"]
        for macro, regex in MACROS.items():
            pattern = pattern.replace(macro, regex)
        out.append(
            Family(
                f["name"],
                re.compile(pattern),
                f["source"],
                f.get("prefixed", True),
                f.get("snippet", ""),
            )
        )
    return out


FAMILIES = _load()


def records(log: bytes, prefix: re.Pattern[str] = PREFIX) -> list[tuple[bool, str]]:
    """(prefixed, text) per record, the prefix stripped when it matches `prefix`."""
    out: list[tuple[bool, str]] = []
    for line in log.decode("utf-8", "replace").split("\n"):
        for frame in line.split("\r"):
            for piece in _GLUED.split(frame):
                if piece:
                    m = prefix.match(piece)
                    out.append((True, piece[m.end() :]) if m else (False, piece))
    return out


def family_of(prefixed: bool, text: str) -> Family | None:
    return next((f for f in FAMILIES if f.prefixed == prefixed and f.matches(text)), None)
