"""Warmups of the simulated server, as the Foundation parser reads them."""

import re

import pytest

from sgwatch.core.summary import Summary, summarize
from sgwatch.engines import default
from sgwatch.live.ingest import LogIngest
from tests.sim.simproc import READY


def until_ready(log: bytes) -> Summary:
    """The summary a watcher had at the moment the ready line arrived."""
    ingest = LogIngest()
    ingest.feed(log[: log.index(READY) + len(READY) + 1])
    ingest.flush()
    return summarize(ingest.state)


def captures(s: Summary) -> list[tuple[str, int | None, int | None, bool]]:
    return [(c.kind, c.done, c.total, c.ended) for c in s.graph_captures]


def lines_with(log: bytes, text: str) -> list[str]:
    return [ln for ln in log.decode().splitlines() if text in ln]


def test_seed_workflow_tp2_piecewise(scenarios):
    r = scenarios["tp2-piecewise-0.5"]
    s = until_ready(r.log)
    assert (s.state, s.ready) == ("ready", True)
    assert captures(s) == [
        ("decode", 36, 36, True),
        ("piecewise", 50, 50, True),
        ("compile", 50, 50, True),
    ]
    names = [p.name for p in s.phases]
    for phase in ("loading_weights", "allocating_kv_cache", "capturing_graphs", "compiling"):
        assert phase in names
    assert names[-1] == "warming_up"
    assert (s.weights.done, s.weights.total) == (12, 12)
    # Realistic, not instant: tens of seconds of weights, a minute or more of capture.
    # (The simulated clock follows the wall clock: a loaded machine stretches it.)
    assert 10 < s.weights.seconds < 120
    assert sum(c.seconds for c in s.graph_captures if c.kind != "compile") > 60


def test_serving_then_sigterm_reads_as_stopped_with_throughput(scenarios):
    r = scenarios["tp2-piecewise-0.5"]
    assert r.returncode == 0
    s = r.summary
    assert (s.state, s.ready) == ("stopped", True)
    assert s.throughput.samples >= 5
    assert 20 < s.throughput.gen_tok_s_median < 200  # a 27 B model on two GPUs
    assert s.requests >= 2


def test_every_rank_logs_its_phases_and_rank0_its_bars(scenarios):
    log = scenarios["tp4-moe-0.4"].log
    for text in (
        "Init torch distributed begin.",
        "Load weight begin.",
        "Load weight end.",
        "KV Cache is allocated.",
        "Memory pool end.",
        "Capture cuda graph begin.",
        "Capture cuda graph end.",
    ):
        tags = {re.search(r" (TP\d)\] " + re.escape(text), ln)[1] for ln in lines_with(log, text)}
        assert tags == {"TP0", "TP1", "TP2", "TP3"}, text
    for text in ("Capture cuda graph bs [", "max_total_num_tokens=", "Using model weights format"):
        assert [re.search(r" (TP\d)\] ", ln)[1] for ln in lines_with(log, text)] == ["TP0"]
    # tqdm frames carry no prefix and are \r-separated with no newline until the bar closes.
    frames = log.split(b"\r")
    assert any(f.startswith(b"Capturing batches (avail_mem=") for f in frames)
    assert not re.search(rb"\] Capturing batches", log)


def test_other_ranks_lines_glue_onto_an_open_bar(scenarios):
    # MoE kernel-config notices land on rank 0's first frame, as in real multi-rank logs.
    moe = scenarios["tp4-moe-0.4"].log
    assert re.search(rb"\?it/s\]\[\d{4}-\d\d-\d\d [\d:]+ TP\d\] Using MoE kernel config", moe)
    # A rank that finishes first logs its end while rank 0's bar is still open.
    tp2 = scenarios["tp2-piecewise-0.5"].log
    assert re.search(rb"(?:it/s|s/it)\]\[\d{4}-\d\d-\d\d [\d:]+ TP1\] Capture cuda graph end", tp2)


def test_old_format_without_cuda_graphs(scenarios):
    r = scenarios["tp1-nograph-0.4"]
    s = until_ready(r.log)
    assert (s.state, s.ready, s.graph_captures) == ("ready", True, [])
    assert b"Init torch distributed begin." in r.log
    assert b"Capture cuda graph" not in r.log
    assert b"Decode batch. #running-req: 1" in r.log
    assert b"cuda graph: False" in r.log
    assert not re.search(rb"\[[\d: -]+ TP0\]", r.log)  # tp 1: no rank tag
    assert r.summary.throughput.samples >= 5


def test_speculative_decoding_new_format(scenarios):
    r = scenarios["tp2-eagle-0.5.23"]
    s = until_ready(r.log)
    assert (s.state, s.ready) == ("ready", True)
    assert captures(s) == [
        ("prefill", 50, 50, True),
        ("verify", 8, 8, True),
        ("draft", 8, 8, True),
        ("draft_extend", 8, 8, True),
    ]
    assert b"Init parallel begin." in r.log
    assert re.search(rb"accept len: \d\.\d\d, accept rate: \d\.\d\d, cuda graph: True", r.log)
    assert 2.0 < r.summary.throughput.accept_len_mean < 3.5


def test_speculative_decoding_is_faster_than_plain(scenarios):
    plain = scenarios["tp1-baseline-0.5"].summary.throughput
    spec = scenarios["tp1-nextn-0.5"].summary.throughput
    assert spec.accept_len_mean is not None and plain.accept_len_mean is None
    assert spec.gen_tok_s_median > 1.3 * plain.gen_tok_s_median
    assert b"Decode batch, #running-req: 1" in scenarios["tp1-nextn-0.5"].log
    # Target, draft and draft-extend graphs: three capture bars.
    assert len(scenarios["tp1-nextn-0.5"].summary.graph_captures) == 3


def test_multimodal_disables_piecewise_only_in_the_args_dump(scenarios):
    r = scenarios["vl-piecewise-0.5"]
    assert until_ready(r.log).ready
    assert [c.kind for c in r.summary.graph_captures] == ["decode"]
    (dump,) = lines_with(r.log, "server_args=")
    assert "enable_piecewise_cuda_graph=True" in dump
    assert "disable_piecewise_cuda_graph=True" in dump
    assert [ln for ln in r.log.decode().splitlines() if "piecewise" in ln.lower()] == [dump]
    assert r.server_info["disable_piecewise_cuda_graph"] is True


def test_multimodal_in_newer_and_older_releases(scenarios):
    new = scenarios["vl-0.5.23"]
    assert b"Breakable CUDA graph is incompatible with multimodal model" in new.log
    assert b"Disable prefill CUDA graph because" in new.log
    assert [c.kind for c in until_ready(new.log).graph_captures] == ["decode"]
    old = scenarios["vl-0.4"]
    assert re.search(rb"Automatically reduce --mem-fraction-static to 0\.\d{3} because", old.log)
    assert until_ready(old.log).ready


def test_unknown_flags_are_kept_in_the_dump(scenarios):
    r = scenarios["tp2-piecewise-0.5"]
    (dump,) = lines_with(r.log, "server_args=ServerArgs(")
    assert "unknown_flag=3" in dump and "enable_something=True" in dump
    assert "tp_size=2" in dump and "enforce_piecewise_cuda_graph=True" in dump
    info = r.server_info
    assert (info["unknown_flag"], info["enable_something"], info["tp_size"]) == (3, True, 2)
    assert " sim --model-path Qwen/Qwen3.6-27B --tp 2 " in info["launch_command"]
    assert "--unknown-flag 3" in info["launch_command"]
    assert 0.5 < info["mem_fraction_static"] < 0.95  # resolved from "auto"


def test_new_format_dumps_a_dict(scenarios):
    (dump,) = lines_with(scenarios["tp2-eagle-0.5.23"].log, "server_args=")
    assert re.search(r"server_args=\{'model_path': 'Qwen/Qwen3-8B', ", dump)
    assert "'speculative_algorithm': 'EAGLE'" in dump


@pytest.mark.parametrize("name", ["tp2-piecewise-0.5", "tp1-nograph-0.4", "tp2-eagle-0.5.23"])
def test_serving_leaves_no_gpu_state_behind(scenarios, name):
    assert scenarios[name].state_files == []


def test_the_seeds_model_is_multimodal_and_loses_its_piecewise_graphs_silently(scenarios):
    """Qwen3.6-27B at TP 2 with NEXTN, piecewise graphs not enforced: SGLang 0.5 turns
    them off for the multimodal class without a word (only the dump says so), warns
    about what speculative decoding changes, and loads the MTP draft with its own line."""
    r = scenarios["tp2-nextn-seed-0.5"]
    s = until_ready(r.log)
    assert s.ready and "compile" not in [c.kind for c in s.graph_captures]
    (dump,) = lines_with(r.log, "server_args=")
    assert "disable_piecewise_cuda_graph=True" in dump and "disable_overlap_schedule=True" in dump
    assert [ln for ln in r.log.decode().splitlines() if "piecewise" in ln.lower()] == [dump]
    assert len(lines_with(r.log, "Overlap scheduler is disabled because of using eagle")) == 1
    assert "max_running_requests=48" in dump
    loads = [
        re.search(r"type=(\w+).*mem usage=([\d.]+)", ln)
        for ln in lines_with(r.log, "Load weight end")
    ]
    assert [m[1] for m in loads] == ["Qwen3_5ForConditionalGeneration"] * 2 + [
        "Qwen3_5ForCausalLMMTP"
    ] * 2
    assert all(float(m[2]) > 20 for m in loads[:2]) and all(float(m[2]) < 1 for m in loads[2:])
    assert 2.5 < r.summary.throughput.accept_len_mean < 3.2
    # What the main screen says of it (ui/widgets/warmup.py asks the engine the same).
    ingest = LogIngest()
    ingest.feed(r.log)
    ingest.flush()
    s = ingest.state
    changes = {d.setting: d for d in default().speed_changes(s.args, None, s.weights.arch)}
    piecewise = changes["disable_piecewise_cuda_graph"]
    assert piecewise.why == "Qwen3_5ForConditionalGeneration is multimodal"
    assert piecewise.override_flag == "--enforce-piecewise-cuda-graph"
    assert {"disable_overlap_schedule", "max_running_requests"} <= changes.keys()
    assert "compiling" in default().ruled_out_phases(s.args)
    assert s.weights.mem_usage_gb["TP0"] > 20 and s.weights.draft_mem_usage_gb["TP0"] < 1
    # Enforcing the graphs brings the compile and the piecewise capture back.
    enforced = scenarios["tp2-piecewise-0.5"]
    assert "compile" in [c.kind for c in until_ready(enforced.log).graph_captures]
