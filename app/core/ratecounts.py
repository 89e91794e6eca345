"""Every tok/s sample of a run, counted for its median and max in bounded memory.

A serving log holds millions of samples. They are counted in 0.1 tok/s buckets
(a bucket holds the rates from k/10 up to, not including, (k+1)/10), so memory is
set by the range of the rates, not by how many there are: 30,000 buckets at most
for rates spread over 50-3,000 tok/s. The median is read from the buckets' middles:
within `MEDIAN_ERROR` (0.05 tok/s) of the exact median for rates as SGLang prints
them (two decimals). The max is exact.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

MEDIAN_ERROR = 0.05  # tok/s: half a bucket


class RateCounts:
    def __init__(self) -> None:
        self._texts: Counter[str] = Counter()  # bucket as printed, "1234.5", until read
        self._buckets: Counter[int] = Counter()  # bucket index, 12345
        self._top: float | None = None  # the largest rate

    def add_buckets(self, buckets: list[str], in_bucket: Callable[[str], list[str]]) -> None:
        """Count rates by their buckets as printed (`\\d+\\.\\d`: a rate's text
        less its last decimal, no leading zeros, so a longer text is a larger
        bucket). `in_bucket(b)`: the rates, as printed, whose bucket is `b`;
        asked only of the largest bucket, when a rate in it may be a new max."""
        if not buckets:
            return
        self._texts.update(buckets)
        top = max(zip(map(len, buckets), buckets, strict=True))[1]
        if self._top is None or self._top < float(top + "9"):
            self._offer(max(map(float, in_bucket(top))))

    def add(self, value: float) -> None:
        # For a two-decimal rate this is its text's bucket (every one to 100,000 tok/s
        # checked: the product rounds to the whole tenth, never below it).
        self._buckets[math.floor(value * 10)] += 1
        self._offer(value)

    def extend(self, later: RateCounts) -> None:
        """Count the rates `later` counted too."""
        self._texts.update(later._texts)
        self._buckets.update(later._buckets)
        if later._top is not None:
            self._offer(later._top)

    def _offer(self, value: float) -> None:
        if self._top is None or value > self._top:
            self._top = value

    def max(self) -> float | None:
        return self._top

    def median(self) -> float | None:
        """The middle of the median's bucket (of the two middle samples'
        buckets, averaged, for an even count)."""
        counts = self._buckets
        for text, n in self._texts.items():  # each distinct bucket converted once a read
            counts[int(text.replace(".", ""))] += n
        self._texts.clear()
        total = counts.total()
        if not total:
            return None
        lo_rank, hi_rank = (total - 1) // 2, total // 2
        lo = hi = None
        seen = 0
        for bucket, count in sorted(counts.items()):
            if lo is None and seen + count > lo_rank:
                lo = bucket
            if seen + count > hi_rank:
                hi = bucket
                break
            seen += count
        assert lo is not None and hi is not None
        return (lo + hi + 1) / 20
