"""What the shared scheduler counts, and the Prometheus text page each engine makes of it.

The counts are plain fields the scheduler and the stats lines update and read; an
engine's page (sglang/metrics_page.py, vllm/metrics.py) names them as that engine
does, and prometheus_client writes the text, as it does in the real servers (labels
sorted, `_total` on counters, Go's float spelling). Latencies are in simulated seconds.
"""

from __future__ import annotations

import abc
import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

_TTFT_BUCKETS = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0)
_ITL_BUCKETS = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.06, 0.1)
_E2E_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 60.0, 120.0, 300.0)


@dataclass(slots=True)
class Histogram:
    buckets: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    n: int = 0

    def __post_init__(self) -> None:
        self.counts = [0] * len(self.buckets)

    def observe(self, value: float, times: int = 1) -> None:
        i = bisect.bisect_left(self.buckets, value)
        if i < len(self.counts):
            self.counts[i] += times
        self.total += value * times
        self.n += times

    def family(self, name: str, help_text: str, labels: dict[str, str]) -> Metric:
        """The histogram as prometheus_client's family `name` (cumulative buckets)."""
        family = HistogramMetricFamily(name, help_text, labels=list(labels))
        cumulative, buckets = 0, []
        for bound, count in zip(self.buckets, self.counts, strict=True):
            cumulative += count
            buckets.append((floatToGoString(bound), cumulative))
        buckets.append(("+Inf", self.n))
        family.add_metric(list(labels.values()), buckets, self.total)
        return family


@dataclass(slots=True)
class Metrics(abc.ABC):
    model_name: str
    running: int = 0
    queued: int = 0
    token_usage: float = 0.0  # of the KV cache, 0 to 1
    gen_throughput: float = 0.0  # the last decode window's tok/s
    accept_length: float | None = None  # speculative decoding's, over the last window
    prompt_tokens: int = 0
    generation_tokens: int = 0
    requests: int = 0
    ttft: Histogram = field(default_factory=lambda: Histogram(_TTFT_BUCKETS))
    itl: Histogram = field(default_factory=lambda: Histogram(_ITL_BUCKETS))
    e2e: Histogram = field(default_factory=lambda: Histogram(_E2E_BUCKETS))

    @abc.abstractmethod
    def families(self) -> Iterable[Metric]:
        """The page's metrics, in the order the engine's page lists them."""

    def render(self) -> str:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Collector(self))
        return generate_latest(registry).decode()


@dataclass(frozen=True, slots=True, eq=False)  # the registry keys its collectors
class _Collector:
    metrics: Metrics

    def collect(self) -> Iterator[Metric]:
        yield from self.metrics.families()
