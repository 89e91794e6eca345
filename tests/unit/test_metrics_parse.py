"""SGLang's /metrics page: Prometheus text -> load, token rates and latency quantiles."""

import pytest

from sgwatch.engines.prometheus import parse_exposition
from sgwatch.engines.sglang.metrics import read_metrics
from sgwatch.engines.shapes.metrics import Histogram, MetricsError, between
from sgwatch.sim.sglang.metrics_page import SglangMetrics as Metrics

R0 = 'engine_type="unified",model_name="Qwen/Qwen3-8B",moe_ep_rank="0",pp_rank="0",tp_rank="0"'


def page(gen: float, prompt: float, requests: float, ttft: list[float], itl: list[float]) -> str:
    """Two DP ranks' series, as SGLang's multiprocess collector writes them."""
    lines = [
        "# HELP sglang:num_running_reqs The number of running requests.",
        "# TYPE sglang:num_running_reqs gauge",
        f'sglang:num_running_reqs{{{R0},dp_rank="0"}} 3.0',
        f'sglang:num_running_reqs{{{R0},dp_rank="1"}} 2.0',
        "# TYPE sglang:num_queue_reqs gauge",
        f'sglang:num_queue_reqs{{{R0},dp_rank="0"}} 1.0',
        f'sglang:num_queue_reqs{{{R0},dp_rank="1"}} 0.0',
        "# TYPE sglang:token_usage gauge",
        f'sglang:token_usage{{{R0},dp_rank="0"}} 0.25',
        f'sglang:token_usage{{{R0},dp_rank="1"}} 0.75',
        "# TYPE sglang:spec_accept_length gauge",
        f'sglang:spec_accept_length{{{R0},dp_rank="0"}} 2.5',
        f'sglang:spec_accept_length{{{R0},dp_rank="1"}} 3.5',
        "# TYPE sglang:generation_tokens_total counter",
        f'sglang:generation_tokens_total{{{R0},dp_rank="0"}} {gen / 2}',
        f'sglang:generation_tokens_total{{{R0},dp_rank="1"}} {gen / 2}',
        f'sglang:generation_tokens_created{{{R0},dp_rank="0"}} 1.7e9',
        "# TYPE sglang:prompt_tokens_total counter",
        f"sglang:prompt_tokens_total{{{R0}}} {prompt}",
        "# TYPE sglang:num_requests_total counter",
        f"sglang:num_requests_total{{{R0}}} {requests} 1764500000000",  # with a timestamp
    ]
    for name, bounds, values in (
        ("time_to_first_token_seconds", (0.1, 0.2, 0.4, 0.8), ttft),
        ("inter_token_latency_seconds", (0.01, 0.02, 0.04), itl),
    ):
        lines.append(f"# TYPE sglang:{name} histogram")
        for b in (*bounds, float("inf")):
            n = sum(v <= b for v in values)
            le = "+Inf" if b == float("inf") else str(b)
            lines.append(f'sglang:{name}_bucket{{{R0},le="{le}"}} {float(n)}')
        lines.append(f"sglang:{name}_sum{{{R0}}} {sum(values)}")
        lines.append(f"sglang:{name}_count{{{R0}}} {float(len(values))}")
    return "\n".join(lines) + "\n"


def test_one_scrape_sums_load_over_ranks_and_averages_usage():
    p = read_metrics(page(1000, 400, 7, [0.15], [0.015]))
    assert (p.running, p.queued) == (5.0, 1.0)
    assert p.token_usage == pytest.approx(0.5)
    assert p.accept_length == pytest.approx(3.0)
    assert (p.generation_tokens, p.prompt_tokens, p.requests) == (1000, 400, 7)
    assert p.gen_throughput is None  # not on this page
    assert p.ttft is not None and p.ttft.count == 1 and p.ttft.bounds[-1] == float("inf")


def test_two_scrapes_give_token_rates_and_the_window_latency_quantiles():
    early_ttft, early_itl = [0.7, 0.7, 0.7], [0.035] * 10
    late_ttft = [*early_ttft, *[0.15] * 19, 0.3]
    late_itl = [*early_itl, *[0.015] * 90, *[0.03] * 10]
    w = between(
        read_metrics(page(1000, 400, 7, early_ttft, early_itl)),
        read_metrics(page(3000, 1400, 17, late_ttft, late_itl)),
        seconds=10.0,
    )
    assert w.gen_tok_s == pytest.approx(200.0)
    assert w.prompt_tok_s == pytest.approx(100.0)
    assert w.requests_done == 10
    assert (w.running, w.queued) == (5.0, 1.0)
    # The window holds only the later observations: 19 of 20 first tokens in (0.1, 0.2].
    assert w.ttft_p50 == pytest.approx(0.1 + 0.1 * 10 / 19)
    assert 0.1 < w.ttft_p95 <= 0.2
    # 90 of 100 token gaps in (0.01, 0.02], 10 in (0.02, 0.04].
    assert w.itl_p50 == pytest.approx(0.01 + 0.01 * 50 / 90)
    assert w.itl_p95 == pytest.approx(0.02 + 0.02 * 5 / 10)


def test_a_counter_that_went_down_means_a_restart_and_counts_from_zero():
    w = between(
        read_metrics(page(5000, 900, 50, [0.15] * 5, [0.015] * 5)),
        read_metrics(page(200, 50, 1, [0.3], [0.03])),
        seconds=4.0,
    )
    assert w.gen_tok_s == pytest.approx(50.0)
    assert w.requests_done == 1
    assert w.ttft_p50 == pytest.approx(0.3)  # the restarted server's histogram alone


def test_quantiles_past_the_last_finite_bucket_and_of_an_empty_window():
    h = Histogram((0.1, 1.0, float("inf")), (0.0, 1.0, 4.0), 12.0, 4.0)
    assert h.quantile(0.95) == 1.0  # beyond the buckets: the last bound is all we know
    assert h.quantile(0.25) == pytest.approx(1.0)
    assert h.mean == 3.0
    assert h.minus(h).quantile(0.5) is None
    same = read_metrics(page(10, 10, 1, [0.15], [0.015]))
    assert between(same, same, 1.0).itl_p95 is None


def test_label_values_with_escapes_braces_and_commas():
    (s,) = parse_exposition('x_total{path="/a,b}",msg="say \\"hi\\"\\n",le="+Inf"} +Inf\n')
    assert s.labels == {"path": "/a,b}", "msg": 'say "hi"\n', "le": "+Inf"}
    assert s.value == float("inf")


def test_nan_values_comments_and_timestamps():
    samples = parse_exposition(
        "# HELP sglang:token_usage The KV pool in use {not labels}.\n"
        "# a free comment\n"
        "sglang:token_usage NaN\n"
        'sglang:num_requests_total{tp_rank="0"} 7 1764500000000\n'
    )
    assert [s.name for s in samples] == ["sglang:token_usage", "sglang:num_requests_total"]
    assert samples[0].value != samples[0].value  # NaN
    assert (samples[1].labels, samples[1].value) == ({"tp_rank": "0"}, 7)


def test_text_that_is_not_an_exposition_page_is_an_error():
    with pytest.raises(MetricsError, match="not a Prometheus text page"):
        read_metrics('{"detail": "Not Found"}')
    with pytest.raises(MetricsError, match="lots"):
        read_metrics("sglang:token_usage{} lots\n")
    with pytest.raises(ValueError, match="apart in time"):
        between(read_metrics(""), read_metrics(""), 0)


def test_the_simulators_page_reads_back_as_what_it_recorded():
    m = Metrics("Qwen/Qwen3-8B", running=2, queued=1, token_usage=0.12, gen_throughput=88.5)
    m.accept_length = 2.86
    m.prompt_tokens, m.generation_tokens, m.requests = 512, 2048, 8
    for v in (0.15, 0.15, 0.3, 0.5):
        m.ttft.observe(v)
    m.itl.observe(0.009, times=90)
    m.itl.observe(0.05, times=10)
    before = read_metrics(Metrics("Qwen/Qwen3-8B").render())
    p = read_metrics(m.render())
    assert (p.running, p.queued, p.token_usage) == (2, 1, pytest.approx(0.12))
    assert (p.gen_throughput, p.accept_length) == (pytest.approx(88.5), pytest.approx(2.86))
    assert (p.prompt_tokens, p.generation_tokens, p.requests) == (512, 2048, 8)
    w = between(before, p, seconds=8.0)
    assert w.gen_tok_s == pytest.approx(256.0)
    assert 0.008 < w.itl_p50 <= 0.01  # the simulator's 9 ms gaps, to its bucket
    assert 0.04 < w.itl_p95 <= 0.06
    assert 0.1 < w.ttft_p50 <= 0.2
