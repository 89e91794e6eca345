"""The `/metrics` page (`--enable-metrics`): SGLang's metric names, Prometheus text.

Names and label set follow SGLang's metrics collector (shared engines.md §5):
gauges for load and throughput, counters with the `_total` suffix that
prometheus_client adds, histograms for time to first token, inter-token
latency and end-to-end latency. Latencies are in simulated seconds.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

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

    def exposition(self, name: str, labels: str) -> list[str]:
        """The histogram's sample lines as prometheus_client writes them (buckets,
        count, sum); `name` with the engine's prefix."""
        out, cumulative = [], 0
        for bound, count in zip(self.buckets, self.counts, strict=True):
            cumulative += count
            out.append(f'{name}_bucket{{{labels},le="{bound}"}} {float(cumulative)}')
        out.append(f'{name}_bucket{{{labels},le="+Inf"}} {float(self.n)}')
        out.append(f"{name}_count{{{labels}}} {float(self.n)}")
        out.append(f"{name}_sum{{{labels}}} {self.total}")
        return out


@dataclass(slots=True)
class Metrics:
    model_name: str
    running: int = 0
    queued: int = 0
    token_usage: float = 0.0
    gen_throughput: float = 0.0
    accept_length: float | None = None
    prompt_tokens: int = 0
    generation_tokens: int = 0
    requests: int = 0
    ttft: Histogram = field(default_factory=lambda: Histogram(_TTFT_BUCKETS))
    itl: Histogram = field(default_factory=lambda: Histogram(_ITL_BUCKETS))
    e2e: Histogram = field(default_factory=lambda: Histogram(_E2E_BUCKETS))

    def render(self) -> str:
        labels = (
            f'engine_type="unified",model_name="{self.model_name}",'
            'moe_ep_rank="0",pp_rank="0",tp_rank="0"'
        )
        out: list[str] = []

        def metric(name: str, kind: str, help_text: str, value: float) -> None:
            out.append(f"# HELP sglang:{name} {help_text}")
            out.append(f"# TYPE sglang:{name} {kind}")
            out.append(f"sglang:{name}{{{labels}}} {float(value)}")

        gauges = [
            ("num_running_reqs", "The number of running requests.", self.running),
            ("num_queue_reqs", "The number of requests in the waiting queue.", self.queued),
            ("token_usage", "The token usage.", self.token_usage),
            ("gen_throughput", "The generation throughput (token/s).", self.gen_throughput),
        ]
        if self.accept_length is not None:
            gauges.append(
                ("spec_accept_length", "The average acceptance length.", self.accept_length)
            )
        for name, help_text, value in gauges:
            metric(name, "gauge", help_text, value)
        for name, help_text, value in (
            ("prompt_tokens_total", "Number of prefill tokens processed.", self.prompt_tokens),
            (
                "generation_tokens_total",
                "Number of generation tokens processed.",
                self.generation_tokens,
            ),
            ("num_requests_total", "Number of requests processed.", self.requests),
        ):
            metric(name, "counter", help_text, value)
        for name, what, hist in (
            ("time_to_first_token_seconds", "time to first token", self.ttft),
            ("inter_token_latency_seconds", "inter-token latency", self.itl),
            ("e2e_request_latency_seconds", "end-to-end request latency", self.e2e),
        ):
            help_text = f"Histogram of {what} in seconds."
            out.append(f"# HELP sglang:{name} {help_text}")
            out.append(f"# TYPE sglang:{name} histogram")
            out += hist.exposition(f"sglang:{name}", labels)
        return "\n".join(out) + "\n"
