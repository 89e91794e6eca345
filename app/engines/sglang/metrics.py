"""SGLang's `/metrics` page (with `--enable-metrics`): Prometheus text -> a MetricsPage.

    page = read_metrics(text)   # one scrape; engines/shapes/metrics.py windows two

Every series carries rank labels (`tp_rank`, `dp_rank`, ...); a scrape adds them
up: requests and token counters sum over ranks, usage and accept length are the
mean (each DP rank has its own pool of the same size).
"""

from __future__ import annotations

from sgwatch.engines.prometheus import Series
from sgwatch.engines.shapes.metrics import MetricsPage

PREFIX = "sglang:"


def read_metrics(text: str) -> MetricsPage:
    series = Series(text, PREFIX)
    total, mean, histogram = series.total, series.mean, series.histogram
    return MetricsPage(
        running=total("num_running_reqs"),
        queued=total("num_queue_reqs"),
        token_usage=mean("token_usage"),
        gen_throughput=total("gen_throughput"),
        accept_length=mean("spec_accept_length"),
        prompt_tokens=total("prompt_tokens_total"),
        generation_tokens=total("generation_tokens_total"),
        requests=total("num_requests_total"),
        ttft=histogram("time_to_first_token_seconds"),
        itl=histogram("inter_token_latency_seconds"),
        e2e=histogram("e2e_request_latency_seconds"),
    )
