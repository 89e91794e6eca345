"""Counts of every tok/s sample, for the exact median and the max of a run.

A serving log holds millions of samples and, over hours of changing load,
hundreds of thousands of distinct rates. SGLang prints them with two
decimals, so they are counted by value: `rate_counts()` gives the compiled
counter (sgwatch.core._scan.Cents: a value's count in a page of 1,024 neighbours,
memory set by the range of the rates, not by how many) where it is built, else
a dict of counts. Both give the same floats: a rate's text and its cents
divided by 100 round to the same number.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Protocol

from sgwatch.core import compiled


class RateCounts(Protocol):
    def add_texts(self, texts: list[str]) -> None:
        """Count rates as printed (`\\d+\\.\\d\\d`)."""

    def add(self, value: float) -> None:
        """Count one rate."""

    def max(self) -> float | None: ...

    def median(self) -> float | None: ...


def rate_counts() -> RateCounts:
    return TextCounts() if compiled.scan is None else CentsCounts(compiled.scan.Cents())


def exact_median(counts: Counter[float], total: int) -> float | None:
    """The median of `total` samples counted by value."""
    if not total:
        return None
    lo_rank, hi_rank = (total - 1) // 2, total // 2
    lo = hi = None
    seen = 0
    for value, count in sorted(counts.items()):
        if lo is None and seen + count > lo_rank:
            lo = value
        if seen + count > hi_rank:
            hi = value
            break
        seen += count
    assert lo is not None and hi is not None
    return (lo + hi) / 2


class TextCounts:
    """Pure Python: texts are counted as they come and converted, one per
    distinct value, when read."""

    def __init__(self) -> None:
        self._counts: Counter[float] = Counter()
        self._unread: Counter[str] = Counter()
        self._max: float | None = None

    def add_texts(self, texts: list[str]) -> None:
        self._unread.update(texts)

    def add(self, value: float) -> None:
        self._counts[value] += 1
        if self._max is None or value > self._max:
            self._max = value

    def max(self) -> float | None:
        self._read()
        return self._max

    def median(self) -> float | None:
        self._read()
        return exact_median(self._counts, self._counts.total())

    def _read(self) -> None:
        if not self._unread:
            return
        counts = self._counts
        for text, n in self._unread.items():
            counts[float(text)] += n
        top = max(map(float, self._unread))
        if self._max is None or top > self._max:
            self._max = top
        self._unread.clear()


class CentsCounts:
    """Compiled: values in cents (below 2**30, i.e. 10.7 M tok/s). Anything
    else, which a two-decimal rate never is, is counted beside them by float."""

    def __init__(self, cents: Any) -> None:  # sgwatch.core._scan.Cents
        self._cents = cents
        self._other: Counter[float] = Counter()

    def add_texts(self, texts: list[str]) -> None:
        for text in self._cents.add_texts(texts):
            self._other[float(text)] += 1

    def add(self, value: float) -> None:
        cents = round(value * 100) if math.isfinite(value) else -1
        if cents < 0 or cents / 100 != value or not self._cents.add(cents):
            self._other[value] += 1

    def max(self) -> float | None:
        top = self._cents.max
        tops = [top / 100] if top is not None else []
        return max(tops + list(self._other), default=None)

    def median(self) -> float | None:
        cents, total = self._cents, self._cents.total + self._other.total()
        if not total:
            return None
        if self._other:  # never for printed rates: merge the two, by value
            merged = Counter({c / 100: n for c, n in cents.items()})
            merged.update(self._other)
            return exact_median(merged, total)
        return (cents.select((total - 1) // 2) / 100 + cents.select(total // 2) / 100) / 2
