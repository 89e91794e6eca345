"""SGLang's own start-up figures as its HTTP API gives them once it is up: the
`sglang:startup_time_seconds{phase}` and `sglang:startup_cuda_graph_time_seconds{phase}`
gauges on /metrics and `startup_time` in /server_info (text and answers in their shape),
kept in the run's state and summary beside the time to ready the log's stamps measure."""

from __future__ import annotations

import pytest

from sgwatch.cli.replay import render_timeline
from sgwatch.control.experiments import ready_facts
from sgwatch.core import events as ev
from sgwatch.core.state import ServerState
from sgwatch.core.summary import summarize
from sgwatch.engines import MetricsError, by_name
from tests.replaylines import replay
from tests.unit.test_startup_timings import SGLANG_0_5_23

SGLANG = by_name("sglang")

_LABELS = 'engine_type="unified",model_name="Qwen/Qwen3-8B",moe_ep_rank="0",pp_rank="0"'


def _gauge(name: str, rows: list[tuple[str, int, float]]) -> str:
    head = f"# HELP {name} Startup duration by phase in seconds.\n# TYPE {name} gauge\n"
    return head + "".join(
        f'{name}{{{_LABELS},phase="{phase}",tp_rank="{rank}"}} {value}\n'
        for phase, rank, value in rows
    )


# TP-2: each rank exports its own steps; the slowest is the start-up's.
PAGE = (
    "# HELP sglang:num_running_reqs The number of running requests.\n"
    "# TYPE sglang:num_running_reqs gauge\n"
    f'sglang:num_running_reqs{{{_LABELS},tp_rank="0"}} 0.0\n'
    + _gauge(
        "sglang:startup_time_seconds",
        [
            ("load_weight", 0, 12.02),
            ("load_weight", 1, 12.4),
            ("kv_cache_allocation", 0, 0.02),
            ("scheduler_e2e", 0, 52.09),
            ("tokenizer_e2e", 0, 65.82),
        ],
    )
    + _gauge(
        "sglang:startup_cuda_graph_time_seconds",
        [("prefill", 0, 22.96), ("decode", 0, 12.26), ("decode", 1, 12.5)],
    )
)


def test_the_metrics_page_gives_the_longest_end_to_end_step_and_every_step():
    r = SGLANG.startup_from_metrics(PAGE)
    assert r is not None
    assert (r.seconds, r.source) == (65.82, "/metrics")
    assert r.steps == {
        "load_weight": 12.4,
        "kv_cache_allocation": 0.02,
        "scheduler_e2e": 52.09,
        "tokenizer_e2e": 65.82,
        "cuda_graph.prefill": 22.96,
        "cuda_graph.decode": 12.5,
    }


def test_a_release_that_names_the_whole_start_up_e2e():
    page = _gauge("sglang:startup_time_seconds", [("load_weight", 0, 10.0), ("e2e", 0, 20.0)])
    r = SGLANG.startup_from_metrics(page)
    assert r is not None and r.seconds == 20.0


def test_a_page_without_start_up_gauges_gives_none_and_a_bad_page_is_refused():
    older = PAGE.split("# HELP sglang:startup_time_seconds")[0]
    assert SGLANG.startup_from_metrics(older) is None
    with pytest.raises(MetricsError):
        SGLANG.startup_from_metrics("sglang:startup_time_seconds{phase=oops 1\n")


def test_server_info_gives_the_same_figures_with_the_graphs_nested():
    info = {
        "model_path": "Qwen/Qwen3-8B",
        "startup_time": {
            "load_weight": 12.02,
            "kv_cache_allocation": 0.02,
            "scheduler_e2e": 52.09,
            "cuda_graph": {"prefill": 22.96, "decode": 12.26},
            "tokenizer_e2e": 65.82,
        },
        "version": "0.5.23",
    }
    r = SGLANG.startup_from_info(info)
    assert r is not None
    assert (r.seconds, r.source) == (65.82, "/server_info")
    assert r.steps["cuda_graph.decode"] == 12.26 and r.steps["load_weight"] == 12.02


@pytest.mark.parametrize("value", [None, 1764684000.5, "soon", {}])
def test_server_info_without_the_figures_gives_none(value):
    assert SGLANG.startup_from_info({"startup_time": value}) is None
    assert SGLANG.startup_from_info({"version": "0.4.6"}) is None


def test_vllm_reports_none():
    vllm = by_name("vllm")
    assert vllm.startup_from_metrics(PAGE) is None
    assert vllm.startup_from_info({"startup_time": {"e2e": 3.0}}) is None


def test_the_summary_carries_the_servers_figure_and_the_logs_steps_stay():
    s = ServerState()
    s.apply(ev.StartupTiming("2026-03-04 09:00:50", {"load_weight": 12.0}))
    r = SGLANG.startup_from_metrics(PAGE)
    assert r is not None
    s.apply(r)
    s.apply(ev.ServerStartup(99.0, "/server_info", {}))  # a later report changes nothing
    out = summarize(s)
    assert (out.server_startup_s, out.server_startup_from) == (65.82, "/metrics")
    assert out.startup_timings["load_weight"] == 12.0  # the log said it first
    assert out.startup_timings["cuda_graph.prefill"] == 22.96


def test_the_logs_timings_line_gives_the_whole_until_the_api_gives_it_unrounded():
    line = (
        "[2026-03-04 09:01:06] Engine startup timings (s): load_weight=12.02,"
        " kv_cache_allocation=0.02, scheduler_e2e=52.09, cuda_graph={prefill=22.96,"
        " decode=12.26}, tokenizer_e2e=65.82"
    )
    s = ServerState()
    for e in SGLANG.parser().parse_lines([line]):
        s.apply(e)
    assert (s.server_startup_s, s.server_startup_from) == (65.82, "log")
    assert not s.startup_from_api
    s.apply(ev.ServerStartup(65.8237, "/metrics", {}))
    assert (s.server_startup_s, s.server_startup_from) == (65.8237, "/metrics")
    assert s.startup_from_api


def test_the_history_record_keeps_the_servers_figure_beside_its_own():
    s = ServerState()
    assert "server_startup_s" not in ready_facts(s)
    s.apply(ev.ServerStartup(65.8237, "/server_info", {}))
    assert ready_facts(s)["server_startup_s"] == 65.82


def test_replay_shows_the_servers_figure_beside_the_time_to_ready():
    ready = [*SGLANG_0_5_23, "[2026-03-04 09:01:09] The server is fired up and ready to roll!"]
    s = replay(ready)
    assert (s.server_startup_s, s.server_startup_from) == (65.82, "log")
    assert "  total to ready: 1m09.0s (server says 1m05.8s)" in render_timeline(s, "x.log")
    before = replay(SGLANG_0_5_23[:-1] + ready[-1:])  # no timings line: no figure
    assert "server says" not in render_timeline(before, "x.log")
