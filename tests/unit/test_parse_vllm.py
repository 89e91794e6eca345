"""vLLM's documented log shapes (V0 and V1), from fixtures written in those shapes."""

import random

import pytest

from sgwatch.cli.replay import read_log, server_changes
from sgwatch.core.cmdline import parse, parse_shell
from sgwatch.core.identity import RunIdentity, Speculative
from sgwatch.core.state import OVERRIDDEN
from sgwatch.core.summary import summarize
from sgwatch.engines import by_name, for_command, for_log_line, split_prefix
from sgwatch.engines.shapes.flags import Catalog
from sgwatch.engines.vllm.parse import Parser
from sgwatch.engines.vllm.prefix import split_prefix as vllm_split
from sgwatch.live.ingest import LogIngest
from sgwatch.live.transition import CRASHED, PHASE, READY
from sgwatch.live.watch import Watch
from tests.conftest import FIXTURES
from tests.replaylines import ingested

VLLM = FIXTURES / "vllm"


def captures(summary):
    return [(c.kind, c.done, c.total, c.ended) for c in summary.graph_captures]


def phases(summary):
    return {p.name: p for p in summary.phases}


def test_v1_start_to_serving(replay_fixture):
    s = replay_fixture("vllm/v1_startup_serving.log")
    assert (s.engine, s.version) == ("vllm", "0.11.0")
    assert (s.model, s.tp_size) == ("meta-llama/Llama-3.1-8B-Instruct", 1)
    assert s.state == "serving" and s.ready and s.ready_at == "10:01:05"
    assert list(phases(s)) == [
        "starting",
        "loading_weights",
        "allocating_kv_cache",
        "compiling",
        "capturing_graphs",
        "warming_up",
    ]
    assert s.warmup_seconds == 65.0  # banner 10:00:00 -> startup complete (after 10:01:05)
    assert (s.weights.done, s.weights.total, s.weights.seconds) == (4, 4, 7.4)
    assert s.weights.mem_usage_gb == {"DP0": 14.9889}
    assert s.kv_cache_tokens == 394864
    assert captures(s) == [("piecewise", 67, 67, True), ("decode", 35, 35, True)]
    assert s.graph_captures[-1].seconds == 7.0  # "Graph capturing finished in 7 secs"
    # Two windows with generation, one idle (0.0 tok/s: no sample); the accept lengths
    # come from the SpecDecoding lines.
    t = s.throughput
    assert (t.samples, t.gen_tok_s_last, t.gen_tok_s_max) == (2, 120.6, 120.6)
    assert t.accept_len_mean == pytest.approx((2.50 + 3.10) / 2)
    assert s.requests == 2  # /health and /metrics are probes


def test_the_identity_is_read_from_vllms_own_names_and_the_settings_keep_them():
    ingest = LogIngest()
    ingest.feed((VLLM / "v1_startup_serving.log").read_bytes())
    ingest.flush()
    s = ingest.state
    assert s.identity == RunIdentity(
        "meta-llama/Llama-3.1-8B-Instruct",
        tp=1,
        pp=1,
        dp=1,
        speculative=Speculative("ngram", None, 4, None),  # n-grams need no draft pass
        release="0.11.0",
    )
    assert s.args["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert not {"model_path", "tp_size"} & s.args.keys()  # no other engine's names


def test_speculation_and_a_data_parallel_node_make_the_identity():
    lines = [
        "(APIServer pid=1) INFO 03-02 10:00:00 [api_server.py:1] vLLM API server version 0.11.0",
        "(APIServer pid=1) INFO 03-02 10:00:00 [utils.py:328] non-default args: {'model': 'm', "
        "'tensor_parallel_size': 2, 'data_parallel_size': 4, 'data_parallel_size_local': 2, "
        "'data_parallel_start_rank': 2, 'headless': True, 'speculative_config': "
        "{'method': 'eagle3', 'model': 'd', 'num_speculative_tokens': 3}}",
    ]
    (banner, dump) = Parser().parse_lines(lines)
    assert banner.identity is None  # the banner says no settings
    assert dump.identity == RunIdentity(
        "m", tp=2, dp=4, speculative=Speculative("eagle3", 3, 4, "d"), node_rank=1, nnodes=2,
        release="0.11.0",
    )  # fmt: skip
    v0 = Parser().parse(
        "INFO 12-19 22:58:00 api_server.py:586] args: Namespace(model='m', "
        "speculative_model='[ngram]', num_speculative_tokens=5)"
    )
    assert v0.identity.speculative == Speculative("ngram", None, 6, None)


def test_compiling_starts_when_dynamo_began_tracing(replay_fixture):
    # "Dynamo bytecode transform time: 10.00 s" at 10:00:30: tracing began at 10:00:20.
    p = phases(replay_fixture("vllm/v1_startup_serving.log"))
    assert p["compiling"].started_at == "10:00:20"
    assert p["allocating_kv_cache"].ended_at == "10:00:20"


def test_the_load_columns_read_as_the_common_keys():
    ingest = LogIngest()
    ingest.feed((VLLM / "v1_startup_serving.log").read_bytes())
    ingest.flush()
    last = ingest.state.last_decode
    assert last is not None and last.gen_tok_s is None  # the newest window was idle
    assert (last.number("#running-req"), last.number("#queue-req")) == (0, 0)
    assert last.number("token usage") == 0.0


def test_v0_start_to_stop(replay_fixture):
    s = replay_fixture("vllm/v0_startup_serving.log")
    assert (s.version, s.model, s.tp_size) == ("0.6.5", "meta-llama/Llama-3.2-1B-Instruct", 2)
    assert list(phases(s)) == [
        "starting",
        "loading_weights",
        "allocating_kv_cache",
        "capturing_graphs",
        "warming_up",
    ]
    assert s.ready and s.ready_at == "22:58:28"
    # Both ranks end the one decode capture; the slower says 11 s.
    assert captures(s) == [("decode", 35, 35, True)]
    assert s.graph_captures[0].seconds == 11.0
    assert s.throughput.samples == 2 and s.throughput.gen_tok_s_last == 101.5
    assert s.requests == 1
    assert s.state == "stopped"  # uvicorn's shutdown lines


def test_oom_during_capture_names_the_exception_not_see_root_cause(replay_fixture):
    s = replay_fixture("vllm/v1_crash_oom_capture.log")
    assert s.state == "crashed"
    assert s.crash.phase == "capturing_graphs"
    assert s.crash.summary.startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert s.crash.exception == "torch.OutOfMemoryError"
    assert captures(s) == [("piecewise", 8, 67, False)]


def test_a_dead_worker_is_the_crash_when_nothing_more_specific_follows(replay_fixture):
    s = replay_fixture("vllm/v1_init_failed_only.log")
    assert s.state == "crashed" and s.crash.phase == "allocating_kv_cache"
    assert s.crash.summary.startswith("Worker proc VllmWorker-1 died unexpectedly")


def test_an_argparse_error_is_a_crash_with_status_2(replay_fixture):
    s = replay_fixture("vllm/argparse_error.log")
    assert s.state == "crashed"
    assert s.crash.summary == "vllm serve: error: unrecognized arguments: --mem-fraction-static 0.8"
    assert s.crash.exit_code == 2


def test_overrides_become_differences_with_the_servers_reason():
    ingest = LogIngest()
    ingest.feed((VLLM / "eager_overrides_ansi.log").read_bytes())
    ingest.flush()
    state = ingest.state
    assert state.version == "0.15.1"
    # Said by the API server before the engine's config line: kept across it.
    assert state.args["cudagraph_mode"] == "NONE" and state.args["optimization_level"] == 0
    cmd = parse_shell("vllm serve m --enforce-eager --optimization-level 3")
    diffs = by_name("vllm").differences(cmd, state.args, Catalog(engine="vllm", options=()))
    by_setting = {d.setting: d for d in diffs}
    assert set(by_setting) == {"cudagraph_mode", "optimization_level"}
    level = by_setting["optimization_level"]
    assert (level.effective, level.requested, level.reason) == (0, "3", "overridden")
    assert level.why == "Enforce eager set, overriding optimization level to -O0"
    graphs = by_setting["cudagraph_mode"]
    assert graphs.reason == "auto" and graphs.why == "Cudagraph is disabled under eager mode"


def test_no_override_no_differences(replay_fixture):
    ingest = LogIngest()
    ingest.feed((VLLM / "v1_startup_serving.log").read_bytes())
    ingest.flush()
    assert OVERRIDDEN not in ingest.state.args
    assert by_name("vllm").differences(None, ingest.state.args, Catalog(options=())) == []


@pytest.mark.parametrize(
    ("line", "want"),
    [
        (
            "(EngineCore_DP0 pid=441) INFO 11-24 11:43:54 [core.py:76] hello",
            ("11:43:54", "DP0", "hello"),
        ),
        (
            "(Worker_DP0_TP1_EP1 pid=5016) WARNING 10-24 13:22:34 [x.py:1] w",
            ("13:22:34", "DP0 TP1 EP1", "w"),
        ),
        (
            "(VllmWorker rank=1 pid=2445156) ERROR 05-10 16:00:15 [m.py:470] e",
            ("16:00:15", "TP1", "e"),
        ),
        (
            "(VllmWorkerProcess pid=277) INFO 03-22 18:53:23 [worker.py:267] m",
            ("18:53:23", "pid 277", "m"),
        ),
        (
            "(RayWorkerWrapper pid=7234, ip=127.0.0.1) INFO 01-05 10:00:00 [a.py:1] r",
            ("10:00:00", "pid 7234", "r"),
        ),
        ("INFO 05-22 02:20:59 metrics.py:229] Avg prompt", ("02:20:59", None, "Avg prompt")),
        (
            "(APIServer pid=1624) INFO:     Application startup complete.",
            ("", None, "INFO:     Application startup complete."),
        ),
        # Two processes raced: the message is the last tag's.
        (
            "(Worker_TP2_EP2 pid=1) (Worker_TP6_EP6 pid=2) WARNING 09-24 20:53:34 [f.py:7] x",
            ("20:53:34", "TP6 EP6", "x"),
        ),
        # Colour codes, with the escape byte and without it (a paste dropped it).
        (
            "\x1b[0;36m(Worker_TP0 pid=4)\x1b[0;0m INFO 03-16 00:50:11 [p.py:2] c",
            ("00:50:11", "TP0", "c"),
        ),
        ("[0;36m(Worker_TP7 pid=4)[0;0m INFO 03-16 00:50:11 [p.py:2] c", ("00:50:11", "TP7", "c")),
        ("Capturing CUDA graphs (decode, FULL): 100%|██| 35/35", None),
        ("[2026-01-01 10:00:00 TP0] Decode batch, #running-req: 1", None),
    ],
)
def test_prefix_shapes(line, want):
    assert vllm_split(line) == want


def test_the_registry_splits_either_engines_records():
    assert split_prefix("(Worker_TP3 pid=9) INFO 01-01 00:00:01 [a.py:1] m") == (
        "00:00:01",
        "TP3",
        "m",
    )
    assert split_prefix("[2026-01-01 10:00:00 TP1] Decode batch")[1] == "TP1"


def test_a_bar_with_another_processs_record_glued_on_is_both():
    glued = (
        "Capturing CUDA graphs (decode, FULL):  97%|█████████▋| 65/67 [00:15<00:00,  4.58it/s]"
        "(Worker_TP2_EP2 pid=2709392) INFO 09-29 09:52:20 [gpu_model_runner.py:3468] "
        "Graph capturing finished in 38 secs, took 1.64 GiB"
    )
    events = Parser().parse_lines([glued])
    assert [type(e).__name__ for e in events] == ["Progress", "CaptureEnd"]
    assert (events[0].n, events[0].total, events[1].elapsed_s) == (65, 67, 38.0)


@pytest.mark.parametrize("name", sorted(p.name for p in VLLM.glob("*.log")))
def test_any_chunking_reads_the_same(name):
    data = (VLLM / name).read_bytes()
    with open(VLLM / name, "rb") as f:
        whole = read_log(f).model_dump()
    rnd = random.Random(name)
    for _ in range(5):
        ingest, at = LogIngest(), 0
        while at < len(data):
            step = rnd.randint(1, 400)
            ingest.feed(data[at : at + step])
            at += step
        ingest.flush()
        assert summarize(ingest.state, server_changes(ingest.state)).model_dump() == whole


def test_serving_lines_read_in_bulk_as_one_by_one():
    lines = (VLLM / "v1_startup_serving.log").read_text().splitlines()
    bulk, single = LogIngest(), LogIngest()
    bulk.feed("\n".join(lines).encode() + b"\n")
    for line in lines:
        single.feed(line.encode() + b"\n")
    for ingest in (bulk, single):
        ingest.flush()
    a, b = bulk.state.throughput, single.state.throughput
    assert (a.samples, a.last, a.median, a.accept_len_mean) == (
        b.samples,
        b.last,
        b.median,
        b.accept_len_mean,
    )
    assert bulk.state.requests == single.state.requests == 2


@pytest.mark.parametrize(
    ("command", "program", "positional"),
    [
        (
            "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2",
            ("vllm", "serve"),
            ("Qwen/Qwen3-8B",),
        ),
        ("/opt/venv/bin/vllm serve m --port 8001", ("/opt/venv/bin/vllm", "serve"), ("m",)),
        (
            "python3 -m vllm.entrypoints.openai.api_server --model m",
            ("python3", "-m", "vllm.entrypoints.openai.api_server"),
            (),
        ),
    ],
)
def test_vllm_commands_parse_and_name_the_engine(command, program, positional):
    cmd = parse_shell(command)
    assert (cmd.program, cmd.positional) == (program, positional)
    engine = for_command(cmd)
    assert engine is not None and engine.name == "vllm" and engine.default_port(cmd) == 8000


def test_sglang_commands_stay_sglangs():
    assert for_command(parse(["sglang", "serve", "m"])).name == "sglang"


def test_which_engine_wrote_a_line():
    assert (
        for_log_line(
            "(APIServer pid=1) INFO 01-01 00:00:00 [a.py:1] vLLM API server version 0.11.0"
        )
        == "vllm"
    )
    assert for_log_line("[2026-01-01 10:00:00 TP0] Decode batch, #running-req: 1") == "sglang"
    assert for_log_line("hello") is None


def test_the_watch_publishes_vllms_phases_ready_and_crash():
    watch = Watch("gpu1")
    seen = []
    watch.subscribe(seen.append)
    watch.caught_up = True
    for line in (VLLM / "v1_startup_serving.log").read_bytes().splitlines(keepends=True):
        watch.feed(line)
    values = [t.value for t in seen if t.kind == PHASE]
    assert values[-3:] == ["warming_up", "ready", "serving"]
    assert [t.kind for t in seen].count(READY) == 1

    crashing = Watch("gpu1")
    seen = []
    crashing.subscribe(seen.append)
    crashing.caught_up = True
    crashing.feed((VLLM / "v1_crash_oom_capture.log").read_bytes())
    crash = next(t for t in seen if t.kind == CRASHED)
    assert crash.run is not None and "CUDA out of memory" in crash.run.crash.summary


def test_eager_mode_shows_what_it_costs_and_rules_out_graphs_and_compile():
    ingest = LogIngest()
    ingest.feed((VLLM / "eager_overrides_ansi.log").read_bytes())
    ingest.flush()
    vllm = by_name("vllm")
    changes = {d.setting: d for d in vllm.speed_changes(ingest.state.args, None, None)}
    assert changes["cudagraph_mode"].effect == "no CUDA graphs"
    assert changes["cudagraph_mode"].why == "Cudagraph is disabled under eager mode"
    assert changes["optimization_level"].effect == "optimization level -O0"
    assert all(d.affects_speed for d in changes.values())
    assert vllm.ruled_out_phases(ingest.state.args) == {"capturing_graphs", "compiling"}
    assert vllm.ruled_out_phases({}) == frozenset()


def test_a_long_run_with_idle_and_spec_lines_keeps_the_same_history_in_bulk():
    rnd = random.Random(3)
    lines = []
    for i in range(5000):
        rate = "0.0" if rnd.random() < 0.1 else f"{rnd.uniform(10, 900):.1f}"
        stamp = f"{10 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}"
        lines.append(
            f"(APIServer pid=9) INFO 03-02 {stamp} [loggers.py:123] Engine 000: Avg prompt "
            f"throughput: 0.0 tokens/s, Avg generation throughput: {rate} tokens/s, Running: 1 "
            "reqs, Waiting: 0 reqs, GPU KV cache usage: 0.1%, Prefix cache hit rate: 0.0%"
        )
        if rnd.random() < 0.3:
            lines.append(
                f"(APIServer pid=9) INFO 03-02 {stamp} [metrics.py:96] SpecDecoding metrics: "
                f"Mean acceptance length: {rnd.uniform(1, 4):.2f}, Accepted throughput: "
                "1.00 tokens/s, Drafted throughput: 2.00 tokens/s"
            )
    bulk, single = LogIngest(), LogIngest()
    bulk.feed("\n".join(lines).encode() + b"\n")
    for line in lines:
        single.feed(line.encode() + b"\n")
    a, b = bulk.state.throughput, single.state.throughput
    rated = [x for x in lines if "Avg gen" in x and " 0.0 tokens/s, Running" not in x]
    assert a.samples == b.samples == len(rated) > 3600  # more than the history keeps
    assert list(a.history) == list(b.history)
    assert a.accept_len_mean == pytest.approx(b.accept_len_mean)


def test_a_rate_with_more_decimals_is_still_a_sample():
    line = (
        "(APIServer pid=9) INFO 03-02 10:00:00 [loggers.py:123] Engine 000: Avg prompt "
        "throughput: 0.00 tokens/s, Avg generation throughput: 41.25 tokens/s, Running: 1 reqs, "
        "Waiting: 0 reqs, GPU KV cache usage: 0.1%"
    )
    ingest = LogIngest()
    ingest.feed(line.encode() + b"\n")
    ingest.flush()
    t = ingest.state.throughput
    assert (t.samples, t.last) == (1, 41.2)  # its 0.1 tok/s bucket


def test_a_max_model_len_other_than_asked_is_an_override():
    lines = [
        "(APIServer pid=9) INFO 03-02 10:00:00 [utils.py:328] non-default args: "
        "{'model': 'm', 'max_model_len': 65536}",
        "(APIServer pid=9) INFO 03-02 10:00:04 [model.py:1510] Using max model len 32768",
    ]
    diffs = by_name("vllm").differences(None, ingested(lines).state.args, Catalog(options=()))
    assert [(d.setting, d.effective, d.requested, d.reason) for d in diffs] == [
        ("max_model_len", 32768, 65536, "overridden")
    ]
    assert diffs[0].why == "Using max model len 32768"
    same = LogIngest()
    same.feed(lines[0].encode() + b"\n" + lines[1].replace("32768", "65536").encode() + b"\n")
    same.flush()
    assert OVERRIDDEN not in same.state.args
