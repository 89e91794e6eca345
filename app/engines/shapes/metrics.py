"""What an engine's /metrics page says, and what happened between two scrapes.

    page = engine.read_metrics(text)                     # one scrape, summed over ranks
    w = engine.metrics_between(earlier, later, seconds)  # rates and latency quantiles

The common shape of every engine's /metrics (each reads its own names into a
MetricsPage, engines/prometheus.py helping). Counters only grow, so a rate needs
two scrapes; a counter that went down means the server restarted, and the later
value is then the whole increase (as Prometheus's `rate` reads it). Latency
quantiles come from the histogram buckets, interpolated linearly inside the
bucket as `histogram_quantile` does: an estimate, no finer than the buckets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


class MetricsError(ValueError):
    """The text is not a Prometheus exposition page."""


@dataclass(frozen=True, slots=True)
class Histogram:
    bounds: tuple[float, ...]  # bucket upper bounds, ascending, ending with +Inf
    cumulative: tuple[float, ...]  # observations <= each bound
    total: float  # sum of the observed values
    count: float

    def minus(self, earlier: Histogram) -> Histogram:
        """The observations made after `earlier` (the later one alone after a restart)."""
        if earlier.bounds != self.bounds or earlier.count > self.count:
            return self
        return Histogram(
            self.bounds,
            tuple(a - b for a, b in zip(self.cumulative, earlier.cumulative, strict=True)),
            self.total - earlier.total,
            self.count - earlier.count,
        )

    def quantile(self, q: float) -> float | None:
        """The q-quantile estimated from the buckets; None with no observations."""
        if self.count <= 0:
            return None
        rank = q * self.count
        lower, below = 0.0, 0.0
        for bound, cum in zip(self.bounds, self.cumulative, strict=True):
            if cum >= rank:
                if math.isinf(bound):  # past the last finite bucket: its bound is all we know
                    return lower
                inside = cum - below
                return lower + (bound - lower) * ((rank - below) / inside if inside else 1.0)
            lower, below = bound, cum
        return lower

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count > 0 else None


@dataclass(frozen=True, slots=True)
class MetricsPage:
    """One scrape, summed over ranks. A metric the server does not export is None."""

    running: float | None
    queued: float | None
    token_usage: float | None  # fraction of the KV pool in use
    gen_throughput: float | None  # the server's own recent tok/s gauge
    accept_length: float | None  # speculative decoding only
    prompt_tokens: float | None  # counters since the server started
    generation_tokens: float | None
    requests: float | None
    ttft: Histogram | None  # seconds
    itl: Histogram | None  # seconds
    e2e: Histogram | None  # seconds


@dataclass(frozen=True, slots=True)
class MetricsWindow:
    """What happened between two scrapes `seconds` apart; load figures are the later's."""

    seconds: float
    gen_tok_s: float | None
    prompt_tok_s: float | None
    requests_done: float | None
    running: float | None
    queued: float | None
    token_usage: float | None
    accept_length: float | None
    ttft_p50: float | None  # seconds, over the requests of the window
    ttft_p95: float | None
    itl_p50: float | None
    itl_p95: float | None


def between(earlier: MetricsPage, later: MetricsPage, seconds: float) -> MetricsWindow:
    if seconds <= 0:
        raise ValueError(f"the scrapes must be apart in time, got {seconds} s")

    def rate(a: float | None, b: float | None) -> float | None:
        d = increase(a, b)
        return None if d is None else d / seconds

    ttft = _window(earlier.ttft, later.ttft)
    itl = _window(earlier.itl, later.itl)
    return MetricsWindow(
        seconds=seconds,
        gen_tok_s=rate(earlier.generation_tokens, later.generation_tokens),
        prompt_tok_s=rate(earlier.prompt_tokens, later.prompt_tokens),
        requests_done=increase(earlier.requests, later.requests),
        running=later.running,
        queued=later.queued,
        token_usage=later.token_usage,
        accept_length=later.accept_length,
        ttft_p50=_quantile(ttft, 0.5),
        ttft_p95=_quantile(ttft, 0.95),
        itl_p50=_quantile(itl, 0.5),
        itl_p95=_quantile(itl, 0.95),
    )


def increase(earlier: float | None, later: float | None) -> float | None:
    """A counter's growth; after a reset (it went down) the later value is all of it."""
    if later is None:
        return None
    if earlier is None or later < earlier:
        return later
    return later - earlier


def _window(earlier: Histogram | None, later: Histogram | None) -> Histogram | None:
    if later is None:
        return None
    return later if earlier is None else later.minus(earlier)


def _quantile(h: Histogram | None, q: float) -> float | None:
    return None if h is None else h.quantile(q)
