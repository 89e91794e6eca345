"""vLLM's `/metrics` page (always on): `vllm:` names, Prometheus text.

The names follow vLLM's V1 Prometheus logger (shared engines.md): gauges for
running and waiting requests and the KV-cache usage (a fraction), counters with
the `_total` suffix prometheus_client adds (prompt and generation tokens,
prefix-cache queries and hits, speculative drafts and accepted tokens), and
histograms for time to first token, inter-token latency and end-to-end latency,
labelled `engine` and `model_name`. Latencies are in simulated seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sgwatch.sim.metrics_page import Metrics


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

    def render(self) -> str:
        labels = f'engine="0",model_name="{self.model_name}"'
        out: list[str] = []

        def head(name: str, kind: str, help_text: str) -> None:
            out.append(f"# HELP vllm:{name} {help_text}")
            out.append(f"# TYPE vllm:{name} {kind}")

        def metric(name: str, kind: str, help_text: str, value: float) -> None:
            head(name, kind, help_text)
            sample = f"{name}_total" if kind == "counter" else name
            out.append(f"vllm:{sample}{{{labels}}} {float(value)}")

        metric(
            "num_requests_running",
            "gauge",
            "Number of requests in model execution batches.",
            self.running,
        )
        metric(
            "num_requests_waiting",
            "gauge",
            "Number of requests waiting to be processed.",
            self.queued,
        )
        metric(
            "kv_cache_usage_perc",
            "gauge",
            "KV-cache usage. 1 means 100 percent usage.",
            self.token_usage,
        )
        metric(
            "prefix_cache_queries",
            "counter",
            "Prefix cache queries, in terms of number of queried tokens.",
            self.prefix_queries,
        )
        metric(
            "prefix_cache_hits",
            "counter",
            "Prefix cache hits, in terms of number of cached tokens.",
            self.prefix_hits,
        )
        metric(
            "prompt_tokens", "counter", "Number of prefill tokens processed.", self.prompt_tokens
        )
        metric(
            "generation_tokens",
            "counter",
            "Number of generation tokens processed.",
            self.generation_tokens,
        )
        head("request_success", "counter", "Count of successfully processed requests.")
        done = float(self.requests)
        out.append(f'vllm:request_success_total{{{labels},finished_reason="length"}} {done}')
        if self.spec_tokens:
            metric(
                "spec_decode_num_drafts", "counter", "Number of spec decoding drafts.", self.drafts
            )
            metric(
                "spec_decode_num_draft_tokens",
                "counter",
                "Number of draft tokens.",
                self.draft_tokens,
            )
            metric(
                "spec_decode_num_accepted_tokens",
                "counter",
                "Number of accepted tokens.",
                self.accepted,
            )
        for name, what, hist in (
            ("time_to_first_token_seconds", "time to first token", self.ttft),
            ("inter_token_latency_seconds", "inter-token latency", self.itl),
            ("e2e_request_latency_seconds", "e2e request latency", self.e2e),
        ):
            head(name, "histogram", f"Histogram of {what} in seconds.")
            out += hist.exposition(f"vllm:{name}", labels)
        return "\n".join(out) + "\n"
