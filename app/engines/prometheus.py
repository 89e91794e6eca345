"""Prometheus text pages (format 0.0.4) as samples, for an engine's /metrics reader.

Every series carries rank or engine labels (`tp_rank`, `dp_rank`, `engine`, ...);
Series adds them up per name: counters and load sum over ranks, a fraction
(usage, accept length) is their mean (each rank has its own pool of one size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import fmean

from prometheus_client.parser import text_string_to_metric_families

from sgwatch.engines.shapes.metrics import Histogram, MetricsError


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    labels: dict[str, str]
    value: float


def parse_exposition(text: str) -> list[Sample]:
    """Every sample of a Prometheus text page (format 0.0.4), comments skipped."""
    try:
        return [
            Sample(s.name, s.labels, s.value)
            for family in text_string_to_metric_families(text)
            for s in family.samples
        ]
    except ValueError as e:
        raise MetricsError(f"not a Prometheus text page: {e}") from None


class Series:
    """A page's samples whose names start with `prefix`, by name without it. Series of one
    name (rank or engine labels apart) add up, or average for a fraction."""

    def __init__(self, text: str, prefix: str) -> None:
        self._by_name: dict[str, list[Sample]] = {}
        for s in parse_exposition(text):
            if s.name.startswith(prefix):
                self._by_name.setdefault(s.name[len(prefix) :], []).append(s)

    def total(self, name: str) -> float | None:
        found = self._by_name.get(name)
        return sum(s.value for s in found) if found else None

    def mean(self, name: str) -> float | None:
        found = self._by_name.get(name)
        return fmean(s.value for s in found) if found else None

    def histogram(self, *names: str) -> Histogram | None:
        """The first of `names` the page has, its buckets added up over the series."""
        for name in names:
            buckets: dict[float, float] = {}
            for s in self._by_name.get(f"{name}_bucket", ()):
                bound = float(s.labels.get("le", "nan"))
                if not math.isnan(bound):
                    buckets[bound] = buckets.get(bound, 0.0) + s.value
            if buckets:
                bounds = tuple(sorted(buckets))
                count = self.total(f"{name}_count")
                return Histogram(
                    bounds,
                    tuple(buckets[b] for b in bounds),
                    self.total(f"{name}_sum") or 0.0,
                    buckets[bounds[-1]] if count is None else count,
                )
        return None
