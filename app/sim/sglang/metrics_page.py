"""The `/metrics` page (`--enable-metrics`): SGLang's metric names.

Names and label set follow SGLang's metrics collector (docs/design/log-formats.md):
gauges for load and throughput, counters with the `_total` suffix, histograms for
time to first token, inter-token latency and end-to-end latency.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

from sgwatch.sim.common.metrics import Metrics


@dataclass(slots=True)
class SglangMetrics(Metrics):
    # SGLang's start-up figures (its `startup_time`), in releases that report them.
    startup_time: dict[str, Any] | None = None

    def families(self) -> Iterator[Metric]:
        labels = {
            "engine_type": "unified",
            "model_name": self.model_name,
            "moe_ep_rank": "0",
            "pp_rank": "0",
            "tp_rank": "0",
        }
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
            gauge = GaugeMetricFamily(f"sglang:{name}", help_text, labels=list(labels))
            gauge.add_metric(list(labels.values()), value)
            yield gauge
        for name, help_text, value in (
            ("prompt_tokens", "Number of prefill tokens processed.", self.prompt_tokens),
            ("generation_tokens", "Number of generation tokens processed.", self.generation_tokens),
            ("num_requests", "Number of requests processed.", self.requests),
        ):
            counter = CounterMetricFamily(f"sglang:{name}", help_text, labels=list(labels))
            counter.add_metric(list(labels.values()), value)
            yield counter
        for name, what, hist in (
            ("time_to_first_token_seconds", "time to first token", self.ttft),
            ("inter_token_latency_seconds", "inter-token latency", self.itl),
            ("e2e_request_latency_seconds", "end-to-end request latency", self.e2e),
        ):
            yield hist.family(f"sglang:{name}", f"Histogram of {what} in seconds.", labels)
        if self.startup_time is not None:
            yield from _startup_gauges(self.startup_time, labels)


def _startup_gauges(startup: dict[str, Any], labels: dict[str, str]) -> Iterator[Metric]:
    """One gauge a step (label `phase`), the CUDA graph roles on a gauge of their own."""
    names = [*labels, "phase"]
    steps = GaugeMetricFamily(
        "sglang:startup_time_seconds", "Engine startup duration by phase in seconds.", labels=names
    )
    graphs = GaugeMetricFamily(
        "sglang:startup_cuda_graph_time_seconds",
        "CUDA graph capture duration by phase in seconds.",
        labels=names,
    )
    for phase, value in startup.items():
        if isinstance(value, dict):
            for role, seconds in value.items():
                graphs.add_metric([*labels.values(), role], seconds)
        else:
            steps.add_metric([*labels.values(), phase], value)
    yield steps
    yield graphs
