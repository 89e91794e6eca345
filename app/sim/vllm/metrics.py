"""vLLM's `/metrics` page (always on): `vllm:` names.

The names follow vLLM's V1 Prometheus logger (docs/design/log-formats.md): gauges
for running and waiting requests and the KV-cache usage (a fraction), counters with
the `_total` suffix (prompt and generation tokens, prefix-cache queries and hits,
speculative drafts and accepted tokens), and histograms for time to first token,
inter-token latency and end-to-end latency, labelled `engine` and `model_name`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

from sgwatch.sim.common.metrics import Metrics


@dataclass(slots=True)
class VllmMetrics(Metrics):
    spec_tokens: int = 0  # num_speculative_tokens; 0: no speculative decoding
    drafts: int = 0
    draft_tokens: int = 0
    accepted: int = 0
    accepted_per_pos: list[int] = field(default_factory=list)
    prefix_queries: int = 0
    prefix_hits: int = 0

    def __post_init__(self) -> None:
        self.accepted_per_pos = [0] * self.spec_tokens

    def families(self) -> Iterator[Metric]:
        labels = {"engine": "0", "model_name": self.model_name}

        def metric(kind: type[Metric], name: str, help_text: str, value: float) -> Metric:
            family = kind(f"vllm:{name}", help_text, labels=list(labels))
            family.add_metric(list(labels.values()), value)
            return family

        yield metric(
            GaugeMetricFamily,
            "num_requests_running",
            "Number of requests in model execution batches.",
            self.running,
        )
        yield metric(
            GaugeMetricFamily,
            "num_requests_waiting",
            "Number of requests waiting to be processed.",
            self.queued,
        )
        yield metric(
            GaugeMetricFamily,
            "kv_cache_usage_perc",
            "KV-cache usage. 1 means 100 percent usage.",
            self.token_usage,
        )
        yield metric(
            CounterMetricFamily,
            "prefix_cache_queries",
            "Prefix cache queries, in terms of number of queried tokens.",
            self.prefix_queries,
        )
        yield metric(
            CounterMetricFamily,
            "prefix_cache_hits",
            "Prefix cache hits, in terms of number of cached tokens.",
            self.prefix_hits,
        )
        yield metric(
            CounterMetricFamily,
            "prompt_tokens",
            "Number of prefill tokens processed.",
            self.prompt_tokens,
        )
        yield metric(
            CounterMetricFamily,
            "generation_tokens",
            "Number of generation tokens processed.",
            self.generation_tokens,
        )
        success = CounterMetricFamily(
            "vllm:request_success",
            "Count of successfully processed requests.",
            labels=[*labels, "finished_reason"],
        )
        success.add_metric([*labels.values(), "length"], self.requests)
        yield success
        if self.spec_tokens:
            yield metric(
                CounterMetricFamily,
                "spec_decode_num_drafts",
                "Number of spec decoding drafts.",
                self.drafts,
            )
            yield metric(
                CounterMetricFamily,
                "spec_decode_num_draft_tokens",
                "Number of draft tokens.",
                self.draft_tokens,
            )
            yield metric(
                CounterMetricFamily,
                "spec_decode_num_accepted_tokens",
                "Number of accepted tokens.",
                self.accepted,
            )
        for name, what, hist in (
            ("time_to_first_token_seconds", "time to first token", self.ttft),
            ("inter_token_latency_seconds", "inter-token latency", self.itl),
            ("e2e_request_latency_seconds", "e2e request latency", self.e2e),
        ):
            yield hist.family(f"vllm:{name}", f"Histogram of {what} in seconds.", labels)
