"""vLLM's series a fleet row reads from Prometheus (vLLM's V1 Prometheus logger).

Tok/s is the rate of the generation-token counter; the KV-cache usage is a
fraction; speculative decoding has no acceptance gauge, so the length is
1 + accepted tokens / drafts over the rate window, vLLM's own definition.
Inter-token latency is `inter_token_latency_seconds`, `time_per_output_token_seconds`
before 0.11.
"""

from __future__ import annotations

from sgwatch.engines.base import FleetSeries

SERIES = FleetSeries(
    generation_tokens="vllm:generation_tokens_total",
    running="vllm:num_requests_running",
    waiting="vllm:num_requests_waiting",
    kv_usage="vllm:kv_cache_usage_perc",
    ttft=("vllm:time_to_first_token_seconds",),
    itl=("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
    accept_counters=(
        "vllm:spec_decode_num_accepted_tokens_total",
        "vllm:spec_decode_num_drafts_total",
    ),
)
