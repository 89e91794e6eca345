"""Line families of SGLang's real output (families.toml), and a log cut into records.

A family is a regular expression for one kind of record plus its source: a
file in the shared real-log folder (test_shapes checks the family matches a
record there), or `log-formats.md` (a line read in the engine's source) with a
literal snippet docs/design/log-formats.md must hold, or Python's and uvicorn's own
standard texts. A record is one piece of a log between newlines, carriage returns
and glue points (a stamped record glued onto a tqdm frame, or anything right after
a frame's closing bracket).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

LOG_FORMATS = Path(__file__).resolve().parents[2] / "docs" / "design" / "log-formats.md"
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
    prefixed: bool  # the record carries the engine's prefix (SGLang's stamp, vLLM's process tag)
    snippet: str

    def matches(self, text: str) -> bool:
        return self.regex.fullmatch(text) is not None


def load_families(
    toml: str, macros: dict[str, str] = MACROS, key: str = "prefixed"
) -> list[Family]:
    """The families of the file `toml` next to this one; `key` names their prefixed flag."""
    doc = tomllib.loads((Path(__file__).parent / toml).read_text())
    out = []
    for f in doc["family"]:
        pattern = f["pattern"]
        for macro, regex in macros.items():
            pattern = pattern.replace(macro, regex)
        out.append(
            Family(
                f["name"],
                re.compile(pattern),
                f["source"],
                f.get(key, True),
                f.get("snippet", ""),
            )
        )
    return out


FAMILIES = load_families("families.toml")


def records(
    log: bytes, prefix: re.Pattern[str] = PREFIX, glued: re.Pattern[str] = _GLUED
) -> list[tuple[bool, str]]:
    """(prefixed, text) per record, the prefix stripped when it matches `prefix`."""
    out: list[tuple[bool, str]] = []
    for line in log.decode("utf-8", "replace").split("\n"):
        for frame in line.split("\r"):
            for piece in glued.split(frame):
                if piece:
                    m = prefix.match(piece)
                    out.append((True, piece[m.end() :]) if m else (False, piece))
    return out


def family_of(prefixed: bool, text: str, families: list[Family] = FAMILIES) -> Family | None:
    return next((f for f in families if f.prefixed == prefixed and f.matches(text)), None)


def undocumented(families: list[Family]) -> list[str]:
    """The families sourced from log-formats.md whose snippet the design note lacks."""
    text = LOG_FORMATS.read_text()
    documented = [f for f in families if f.source == "log-formats.md"]
    assert documented
    return [f.name for f in documented if not f.snippet or f.snippet not in text]
