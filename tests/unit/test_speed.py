"""What SGLang changed on its own that costs speed, why, and the flag that prevents it."""

from __future__ import annotations

import pytest

from sgwatch.core import events as ev
from sgwatch.core.cmdline import parse_shell
from sgwatch.engines import default
from sgwatch.live.watch import Watch

SEED = "Qwen3_5ForConditionalGeneration"
ENGINE = default()


def watch(log: str) -> Watch:
    w = Watch("h")
    w.feed(log.encode())
    return w


def seed_log(extra_args: str = "") -> str:
    """The start of the seed's run: Qwen3.6-27B, TP 2, NEXTN, piecewise not enforced."""
    return (
        "[2026-01-01 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3.6-27B', tp_size=2,"
        " max_running_requests=48, speculative_algorithm='NEXTN', speculative_num_steps=3,"
        " disable_overlap_schedule=True, disable_cuda_graph=False,"
        " enable_piecewise_cuda_graph=False, enforce_piecewise_cuda_graph=False,"
        f" disable_piecewise_cuda_graph=True{extra_args})\n"
        "[2026-01-01 10:00:00] Max running requests is reset to 48 for speculative decoding."
        " You can override this by explicitly setting --max-running-requests.\n"
        "[2026-01-01 10:00:00] Overlap scheduler is disabled because of using eagle speculative"
        " decoding.\n"
        f"[2026-01-01 10:00:20 TP0] Load weight end. type={SEED}, dtype=torch.bfloat16,"
        " avail mem=53.44 GB, mem usage=25.14 GB.\n"
    )


def test_the_seeds_auto_disable_says_why_and_which_flag_keeps_the_graphs():
    s = watch(seed_log()).state
    assert s.weights.arch == SEED
    found = {d.setting: d for d in ENGINE.speed_changes(s.args, None, s.weights.arch)}
    piecewise = found["disable_piecewise_cuda_graph"]
    assert piecewise.why == f"{SEED} is multimodal"
    assert piecewise.override_flag == "--enforce-piecewise-cuda-graph"
    assert piecewise.effect == "piecewise CUDA graphs off (prefill, extend)"
    assert piecewise.affects_speed and piecewise.reason == "auto"
    assert found["disable_overlap_schedule"].why == "NEXTN speculative decoding (spec v1)"
    assert found["max_running_requests"].effective == 48
    # Compile is not a phase this run will have.
    assert ENGINE.ruled_out_phases(s.args) == {ev.COMPILING}


def test_a_flag_the_command_asked_for_is_the_users_choice_not_news():
    s = watch(seed_log()).state
    cmd = parse_shell(
        "python -m sglang.launch_server --model-path Qwen/Qwen3.6-27B --tp 2 "
        "--speculative-algorithm NEXTN --disable-piecewise-cuda-graph --max-running-requests 48"
    )
    found = [d.setting for d in ENGINE.speed_changes(s.args, cmd, s.weights.arch)]
    assert found == ["disable_overlap_schedule"]


def test_enforced_graphs_are_neither_news_nor_ruled_out():
    s = watch(seed_log(", enforce_piecewise_cuda_graph=True")).state
    assert "disable_piecewise_cuda_graph" not in [
        d.setting for d in ENGINE.speed_changes(s.args, None, s.weights.arch)
    ]
    assert ev.COMPILING not in ENGINE.ruled_out_phases(s.args)


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        (", enable_dp_attention=True", "DP attention is on"),
        (", pp_size=2", "pipeline parallel (PP 2)"),
        (", enable_torch_compile=True", "--enable-torch-compile is on"),
        (", lora_paths=['a=b']", "LoRA is on"),
    ],
)
def test_sglangs_other_piecewise_rules_name_themselves(extra, why):
    log = seed_log(extra).replace(f"type={SEED}", "type=Qwen3ForCausalLM")
    s = watch(log).state
    (piecewise,) = [
        d
        for d in ENGINE.speed_changes(s.args, None, s.weights.arch)
        if d.setting == "disable_piecewise_cuda_graph"
    ]
    assert piecewise.why == why


def test_without_the_architecture_the_rule_is_named_as_a_guess():
    s = watch(seed_log().split("[2026-01-01 10:00:20")[0]).state  # before the weights
    (piecewise,) = [
        d
        for d in ENGINE.speed_changes(s.args, None, None)
        if d.setting.endswith("piecewise_cuda_graph")
    ]
    assert "likely a multimodal architecture" in piecewise.why


def test_nothing_is_ruled_out_before_the_settings_are_known():
    assert ENGINE.ruled_out_phases({}) == frozenset()
    assert ENGINE.ruled_out_phases({"disable_cuda_graph": True}) == {
        ev.CAPTURING_GRAPHS,
        ev.COMPILING,
    }
    # 0.5.23: the breakable prefill graph does not compile; tc_piecewise does.
    assert ev.COMPILING in ENGINE.ruled_out_phases({"cuda_graph_backend_prefill": "breakable"})
    assert ENGINE.ruled_out_phases({"cuda_graph_backend_prefill": "tc_piecewise"}) == frozenset()


def test_a_real_log_whose_server_turned_the_overlap_scheduler_off(corpus):
    """docs CI, EAGLE at --log-level warning: no dump, only the server's warning says it."""
    (log,) = corpus.glob("sglang-unknown-spec-eagle-capture-cr-loglevel-warning-1.log")
    w = Watch("docs-ci")
    w.feed(log.read_bytes())
    w.end()
    (overlap,) = ENGINE.speed_changes(w.state.args, None, w.state.weights.arch)
    assert overlap.setting == "disable_overlap_schedule" and overlap.effective is True
    assert (
        overlap.why == "Overlap scheduler is disabled because of using eagle speculative decoding."
    )
    assert overlap.effect == "overlap scheduler off (the GPU waits on the CPU)"


def test_a_lowered_memory_fraction_is_news_only_when_the_server_says_so():
    """0.4 warns while resolving, before its dump; the dump alone is a figure filled in."""
    said = (
        "[2025-03-01 10:00:00] Automatically reduce --mem-fraction-static to 0.760 because "
        "this is a multimodal model.\n"
    )
    dump = (
        "[2025-03-01 10:00:00] server_args=ServerArgs(model_path='m', mem_fraction_static=0.76)\n"
    )
    (lowered,) = ENGINE.speed_changes(watch(said + dump).state.args, None, None)
    assert (lowered.setting, lowered.effective) == ("mem_fraction_static", 0.76)
    assert lowered.why.endswith("because this is a multimodal model.")
    assert lowered.override_flag == "--mem-fraction-static"
    assert ENGINE.speed_changes(watch(dump).state.args, None, None) == []
