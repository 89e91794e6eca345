"""One server in a fleet, as every fleet front end shows it.

A row is a frozen value: a source builds a new one each refresh, and a front end
compares rows by `key` to mark what changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# serving: up and generating; idle: up, nothing to do; warming: starting (phase in
# `detail`); down: not answering (cause in `detail`); crashed: died (cause in
# `detail`); stale: the source stopped answering, the values are the last ones seen.
State = Literal["serving", "idle", "warming", "down", "crashed", "stale"]


@dataclass(frozen=True)
class FleetRow:
    key: str  # stable identity within a fleet: the scrape instance, or the SSH host
    instance: str  # what the user recognises: host:port, or the SSH alias
    state: State
    engine: str | None = None  # an engine's name in the registry ("sglang", "vllm")
    model: str | None = None
    job: str | None = None  # Prometheus job, or the SSH group's name
    host: str | None = None  # the SSH host this server maps to, or its pod's k8s:// address
    detail: str = ""  # phase, capture N/M and ETA, or the cause of down/crashed
    gen_tok_s: float | None = None  # generation tokens per second (a rate)
    running: float | None = None  # requests running
    waiting: float | None = None  # requests waiting
    kv_pct: float | None = None  # KV cache usage, 0-100
    spec_accept: float | None = None  # speculative decoding: accepted share 0-1 or length
    ttft_p50_s: float | None = None
    itl_p50_s: float | None = None  # inter-token latency
    gpu_util_pct: float | None = None  # mean over the host's GPUs
    gpu_mem_used_mib: float | None = None  # summed over the host's GPUs
    gpu_mem_total_mib: float | None = None
    gpu_power_w: float | None = None  # summed over the host's GPUs
    changed_at: float | None = None  # wall clock (epoch s) of the last state change
    # wall clock of a restart the source saw only by its figures (never down), shown a while
    restarted_at: float | None = None
    node: str | None = None  # the Kubernetes node a pod runs on
