"""vLLM's `/metrics` page (always served): Prometheus text with `vllm:` names -> numbers.

    page = read_metrics(text)                    # one scrape
    w = between(earlier, later, seconds)         # the shared MetricsWindow

Series carry `engine` (and `model_name`) labels; with data parallelism each
engine core has its own, so counters and load add up over engines and the
KV-cache usage is their mean. vLLM has no throughput or acceptance gauge: tok/s
comes from the token counters between two scrapes, and the speculative
acceptance length is 1 + accepted tokens / drafts over the window (vLLM's own
`SpecDecoding metrics` definition). Inter-token latency is
`inter_token_latency_seconds`, `time_per_output_token_seconds` before 0.11.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sgwatch.engines.prometheus import Series
from sgwatch.engines.shapes.metrics import MetricsPage, MetricsWindow, increase
from sgwatch.engines.shapes.metrics import between as _between

PREFIX = "vllm:"


@dataclass(frozen=True, slots=True)
class VllmPage(MetricsPage):
    drafts: float | None = None  # speculative decoding counters, since the start
    accepted: float | None = None


def read_metrics(text: str) -> VllmPage:
    series = Series(text, PREFIX)
    total, mean, histogram = series.total, series.mean, series.histogram
    drafts, accepted = (
        total("spec_decode_num_drafts_total"),
        total("spec_decode_num_accepted_tokens_total"),
    )
    return VllmPage(
        running=total("num_requests_running"),
        queued=total("num_requests_waiting"),
        token_usage=mean("kv_cache_usage_perc"),
        gen_throughput=None,
        accept_length=_accept_length(drafts, accepted),
        prompt_tokens=total("prompt_tokens_total"),
        generation_tokens=total("generation_tokens_total"),
        requests=total("request_success_total"),
        ttft=histogram("time_to_first_token_seconds"),
        itl=histogram("inter_token_latency_seconds", "time_per_output_token_seconds"),
        e2e=histogram("e2e_request_latency_seconds"),
        drafts=drafts,
        accepted=accepted,
    )


def between(earlier: MetricsPage, later: MetricsPage, seconds: float) -> MetricsWindow:
    """The shared window; the acceptance length is the window's own, when drafts were made."""
    window = _between(earlier, later, seconds)
    if isinstance(earlier, VllmPage) and isinstance(later, VllmPage):
        drafts = increase(earlier.drafts, later.drafts)
        accepted = increase(earlier.accepted, later.accepted)
        own = _accept_length(drafts, accepted)
        window = replace(window, accept_length=own if own is not None else later.accept_length)
    return window


def _accept_length(drafts: float | None, accepted: float | None) -> float | None:
    if not drafts or accepted is None:
        return None
    return 1.0 + accepted / drafts
