"""The `/metrics` page (`--enable-metrics`): SGLang's metric names.

Names and label set follow SGLang's metrics collector (docs/design/log-formats.md):
gauges for load and throughput, counters with the `_total` suffix, histograms for
time to first token, inter-token latency and end-to-end latency.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

from sgwatch.sim.common.metrics import Metrics


@dataclass(slots=True)
class SglangMetrics(Metrics):
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
