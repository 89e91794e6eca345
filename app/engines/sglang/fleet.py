"""SGLang's series a fleet row reads from Prometheus (served with `--enable-metrics`).

Tok/s is the rate of the generation-token counter (the `gen_throughput` gauge is the
last decode window's only); the token usage is the KV pool's fraction in use; the
speculative acceptance length is a gauge of its own.
"""

from __future__ import annotations

from sgwatch.engines.base import FleetSeries

SERIES = FleetSeries(
    generation_tokens="sglang:generation_tokens_total",
    running="sglang:num_running_reqs",
    waiting="sglang:num_queue_reqs",
    kv_usage="sglang:token_usage",
    ttft=("sglang:time_to_first_token_seconds",),
    itl=("sglang:inter_token_latency_seconds",),
    accept_length="sglang:spec_accept_length",
)
