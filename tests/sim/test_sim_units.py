"""The simulator's pure parts: tqdm spelling, flag parsing, the startup plan."""

import pytest

from sgwatch.sim.common import bars
from sgwatch.sim.common.gpustate import GpuSpec
from sgwatch.sim.common.scheduler import Scheduler
from sgwatch.sim.sglang import args as simargs
from sgwatch.sim.sglang.timeline import build


def plan(*argv: str):
    return build(simargs.parse(["--model-path", *argv]), GpuSpec())


def test_bars_are_spelled_like_real_frames():
    # Frames quoted from the shared real logs.
    assert (
        bars.bar("Capturing batches (bs=4 avail_mem=77.10 GB)", 1, 3, 0.186)
        == "Capturing batches (bs=4 avail_mem=77.10 GB):  33%|███▎      | 1/3 "
        "[00:00<00:00,  5.38it/s]"
    )
    assert (
        bars.bar("Compiling num tokens (num_tokens=8192)", 1, 58, 2.42)
        == "Compiling num tokens (num_tokens=8192):   2%|▏         | 1/58 [00:02<02:17,  2.42s/it]"
    )
    assert bars.bar("", 0, 58, 0.0) == "  0%|          | 0/58 [00:00<?, ?it/s]"
    assert (
        bars.loading("Loading safetensors checkpoint shards", 1, 4, 0.98)
        == "Loading safetensors checkpoint shards:  25% Completed | 1/4 [00:00<00:02,  1.02it/s]"
    )
    assert (
        bars.loading("Loading safetensors checkpoint shards", 1, 1, 50.19)
        == "Loading safetensors checkpoint shards: 100% Completed | 1/1 [00:50<00:00, 50.19s/it]"
    )


def test_sglang_flag_spellings():
    a = simargs.parse(["--model", "m/Qwen3-8B", "--tp", "4", "--mem-fraction", "0.8"])
    assert (a.model_path, a.tp, a.mem_fraction_static, a.mem_fraction_auto) == (
        "m/Qwen3-8B",
        4,
        0.8,
        False,
    )
    assert simargs.parse(["--model-path", "m", "--tensor-parallel-size", "2"]).tp == 2
    with pytest.raises(SystemExit) as e:
        simargs.parse(["--tp", "2"])  # --model-path is required
    assert e.value.code == 2


def test_unknown_flags_keep_their_values_in_order():
    a = simargs.parse(
        ["--model-path", "m", "--a-b", "1", "--flag", "--many", "x", "y", "--eq=z", "--f", "0.5"]
    )
    extras = list(a.dump.items())[-5:]
    assert extras == [("a_b", 1), ("flag", True), ("many", ["x", "y"]), ("eq", "z"), ("f", 0.5)]
    assert "sim_speed" not in a.dump


def test_capture_lists_follow_the_flags():
    a = simargs.parse(["--model-path", "m", "--tp", "2"])
    assert len(a.graph_bs) == 36 and a.graph_bs[-1] == 256  # SGLang's default list
    assert simargs.parse(["--model-path", "m", "--cuda-graph-max-bs", "10"]).graph_bs == [
        1,
        2,
        4,
        8,
        10,
    ]
    pw = simargs.parse(["--model-path", "m", "--enforce-piecewise-cuda-graph"])
    assert pw.piecewise and len(pw.piecewise_tokens) == 50 and pw.piecewise_tokens[-1] == 4096
    assert not simargs.parse(["--model-path", "m"]).piecewise  # opt-in before 0.5.23
    new = simargs.parse(["--model-path", "m", "--sim-format", "0.5.23"])
    assert new.piecewise  # the prefill graph is on by default there


def test_multimodal_auto_disable_and_enforce():
    vl = ["--model-path", "Qwen/Qwen3-VL-8B-Instruct"]
    auto = simargs.parse([*vl, "--enable-piecewise-cuda-graph"])
    assert not auto.piecewise and auto.dump["disable_piecewise_cuda_graph"] is True
    forced = simargs.parse([*vl, "--enforce-piecewise-cuda-graph"])
    assert forced.piecewise and forced.dump["disable_piecewise_cuda_graph"] is False


def test_plan_scales_with_model_size_and_tp():
    small, big = plan("Qwen/Qwen3-8B"), plan("Qwen/Qwen3-32B")
    assert big.weights.seconds > 2 * small.weights.seconds
    assert big.captures[0].item_seconds > small.captures[0].item_seconds
    split = plan("Qwen/Qwen3-32B", "--tp", "4")
    assert split.weights.gib == pytest.approx(big.weights.gib / 4)
    assert small.weights.shards == 4 < big.weights.shards  # ~5 GB safetensors shards
    assert 10 < plan("Qwen/Qwen3.6-27B", "--tp", "2").weights.seconds < 60


def test_plan_stages_by_flags():
    assert plan("m", "--disable-cuda-graph").captures == []
    assert [c.kind for c in plan("m", "--enforce-piecewise-cuda-graph").captures] == [
        "decode",
        "piecewise",
    ]
    new = plan("m", "--sim-format", "0.5.23", "--speculative-algorithm", "EAGLE")
    assert [c.kind for c in new.captures + new.draft_captures] == [
        "prefill",
        "verify",
        "draft",
        "draft_extend",
    ]
    assert new.draft_weights is not None and new.draft_weights.shards == 1


def test_memory_decides_where_startup_fails():
    fine = plan("Qwen/Qwen3.6-27B", "--tp", "2", "--enforce-piecewise-cuda-graph")
    assert all(c.fail_at is None for c in fine.captures) and fine.kv.gib > 0
    tight = plan("Qwen/Qwen3.6-27B", "--tp", "2", "--mem-fraction-static", "0.98")
    assert tight.captures[0].fail_at is not None
    assert (
        plan("meta-llama/Llama-3.1-70B-Instruct", "--tp", "2", "--mem-fraction", "0.4").kv.gib < 0
    )
    assert plan("meta-llama/Llama-3.1-70B-Instruct").weights.fails


def test_the_seeds_model_is_the_multimodal_qwen3_5_class_with_an_mtp_draft():
    a = simargs.parse(["--model-path", "Qwen/Qwen3.6-27B", "--tp", "2"])
    assert (a.model.arch, a.model.multimodal) == ("Qwen3_5ForConditionalGeneration", True)
    assert a.dump["disable_piecewise_cuda_graph"] is True and not a.piecewise
    p = plan(
        "Qwen/Qwen3.6-27B", "--tp", "2", "--speculative-algorithm", "NEXTN",
        "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
    )  # fmt: skip
    assert p.draft_weights.arch == "Qwen3_5ForCausalLMMTP"
    assert 0.6 < p.draft_weights.gib < 0.9 and 24 < p.weights.gib < 27  # per rank
    nextn = simargs.parse(["--model-path", "Qwen/Qwen3.6-27B", "--speculative-algorithm", "NEXTN"])
    assert (nextn.max_running_requests, nextn.dump["max_running_requests"]) == (48, 48)
    assert nextn.dump["disable_overlap_schedule"] is True
    enforced = simargs.parse(["--model-path", "Qwen/Qwen3.6-27B", "--enforce-piecewise-cuda-graph"])
    assert enforced.piecewise and enforced.dump["disable_piecewise_cuda_graph"] is False


def test_language_only_without_encoder_urls_is_refused_at_argument_checking():
    a = simargs.parse(["--model-path", "Qwen/Qwen3.6-27B", "--language-only"])
    assert a.invalid == "requires at least one encoder urls to be set via --encoder-urls"
    ok = ["--model-path", "Qwen/Qwen3.6-27B", "--language-only", "--encoder-urls", "http://e:1"]
    assert simargs.parse(ok).invalid is None


def decode_tok_s(monkeypatch, gpu: str, *argv: str) -> float:
    """The batch-1 decode rate the scheduler plays for these flags on a pair of `gpu`."""
    monkeypatch.setenv("SGWATCH_SIM_GPU_NAME", gpu)
    a = simargs.parse(["--model-path", "Qwen/Qwen3.6-27B", "--tp", "2", *argv])
    sched = Scheduler(a, None, None, None, 1000, None)
    return sched._accept_mean() / sched.step_seconds(1)


def test_decode_responds_to_the_flags_the_way_the_real_server_does(monkeypatch):
    a6000, h100 = "NVIDIA RTX A6000", "NVIDIA H100 80GB HBM3"
    nextn = ("--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
             "--speculative-num-draft-tokens", "4")  # fmt: skip
    # The seed: ~55 tok/s on a pair of 48 GB cards, memory bound.
    assert 50 < decode_tok_s(monkeypatch, a6000, *nextn) < 58
    assert decode_tok_s(monkeypatch, a6000) < 25  # speculation more than doubles it
    # Piecewise graphs serve prefill and extend: bandwidth-bound decode does not move.
    forced = decode_tok_s(monkeypatch, a6000, *nextn, "--enforce-piecewise-cuda-graph")
    assert forced == decode_tok_s(monkeypatch, a6000, *nextn)
    # Decode follows the card's memory bandwidth; without CUDA graphs every step pays launches.
    assert decode_tok_s(monkeypatch, h100, *nextn) > 2 * decode_tok_s(monkeypatch, a6000, *nextn)
    assert decode_tok_s(monkeypatch, h100, "--disable-cuda-graph") < decode_tok_s(monkeypatch, h100)
