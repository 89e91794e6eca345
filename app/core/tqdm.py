"""Parse one tqdm progress frame, in the default and the `% Completed |` formats.

    Capturing batches (bs=4 avail_mem=77.10 GB):  33%|███▎      | 1/3 [00:00<00:00,  5.38it/s]
    Loading safetensors checkpoint shards:  25% Completed | 1/4 [00:00<00:02,  1.02it/s]

Frames cut short (an excerpt ending mid-bar, or another record glued on) still
yield what they hold: a frame without `n/total` gives only the percentage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sgwatch.core import events as ev

_BAR = re.compile(
    r"(?:(?P<desc>[^|]*?):)? *(?P<pct>\d{1,3})%(?:\|[^|]*\|| Completed \|)?"
    r"(?: *(?P<n>\d+)/(?P<total>\d+))?"
    r"(?: \[(?P<elapsed>\d+(?::\d\d)+)(?:<[^,\]]*)?(?:, *(?P<rate>[^\]]*))?)?"
)


@dataclass(slots=True)
class Frame:
    desc: str
    percent: int
    n: int | None
    total: int | None
    elapsed_s: float | None
    rate: str | None

    def progress(self, kind: str, item: str | None, after: str | None) -> ev.Progress:
        """The frame as a parser's event: `kind` and `item` are the engine's reading of it."""
        return ev.Progress(
            None, kind, self.desc, self.n, self.total, self.elapsed_s, self.rate, item, after
        )


def looks_like_bar(line: str) -> bool:
    """Cheap pre-check before the regex: every tqdm frame has `%|` or `% Completed`."""
    return "%|" in line or "% Completed" in line


def parse_bar(line: str) -> Frame | None:
    m = _BAR.match(line)
    if m is None:
        return None
    n, total, elapsed = m["n"], m["total"], m["elapsed"]
    return Frame(
        desc=(m["desc"] or "").strip(),
        percent=int(m["pct"]),
        n=int(n) if n is not None else None,
        total=int(total) if total is not None else None,
        elapsed_s=_clock_seconds(elapsed) if elapsed else None,
        rate=m["rate"].strip() if m["rate"] else None,
    )


def _clock_seconds(text: str) -> float:
    seconds = 0
    for part in text.split(":"):
        seconds = seconds * 60 + int(part)
    return float(seconds)
