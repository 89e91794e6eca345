"""vLLM lowering the CUDA graph mode on its own (one WARNING line): a feature the server
turned off, with its reason and what keeps it, in replay, its JSON and the main screen's
box of the server's changes. Lines in vLLM's shapes."""

from __future__ import annotations

from sgwatch.cli.replay import render_timeline
from sgwatch.engines import of_log
from sgwatch.ui.widgets.warmup import _changes, _checklist
from tests.replaylines import ingested, replay

_START = [
    "(APIServer pid=1) INFO 02-10 08:00:00 [api_server.py:1] vLLM API server version 0.12.0",
    "(APIServer pid=1) INFO 02-10 08:00:00 [utils.py:2] non-default args: {'model': 'm',"
    " 'compilation_config': {'cudagraph_mode': 'FULL_AND_PIECEWISE'}}",
]
SPEC = (
    "(EngineCore_DP0 pid=5) WARNING 02-10 08:00:30 [compilation.py:1390] CUDAGraphMode."
    "FULL_AND_PIECEWISE is not supported with spec-decode for attention backend FlashInferBackend"
    " (support: AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting cudagraph_mode=PIECEWISE"
)
NCCL = (
    "(Worker_DP1_TP0_EP1 pid=9) WARNING 02-10 08:00:31 [vllm.py:812] CUDAGraphMode.FULL_AND_"
    "PIECEWISE is not supported with nccl_alltoall expert-parallel backend; setting"
    " cudagraph_mode=NONE."
)


def test_a_mode_lowered_for_the_attention_backend_is_in_replay_and_its_json():
    s = replay([*_START, SPEC])
    [change] = s.server_changes
    assert (change.setting, change.effective, change.requested) == (
        "cudagraph_mode",
        "PIECEWISE",
        "FULL_AND_PIECEWISE",
    )
    assert change.effect == "CUDA graphs PIECEWISE only"
    assert change.why.startswith("CUDAGraphMode.FULL_AND_PIECEWISE is not supported")
    assert change.override_flag.startswith("--attention-backend NAME (one that captures FULL_AND")
    text = render_timeline(s, "x.log")
    assert "changed by the server, costs speed" in text
    assert "  CUDA graphs PIECEWISE only: CUDAGraphMode.FULL_AND_PIECEWISE" in text


def test_graphs_turned_off_for_the_expert_parallel_backend_rule_out_the_capture():
    state = ingested([*_START, NCCL]).state
    [change] = of_log("vllm").speed_changes(state.args, None, None)
    assert change.effect == "no CUDA graphs"
    assert change.override_flag == "--all2all-backend other than nccl_alltoall"
    assert "– CUDA graphs      off" in _checklist(state, None, None).plain


def test_the_main_screen_box_names_the_change_its_reason_and_the_keeper():
    state = ingested([*_START, SPEC]).state
    shown = _changes(of_log("vllm").speed_changes(state.args, None, None)).plain
    assert shown.startswith("⚠ changed by the server, costs speed")
    assert "• CUDA graphs PIECEWISE only: CUDAGraphMode.FULL_AND_PIECEWISE" in shown
    assert "→ --attention-backend" in shown


def test_a_run_that_kept_its_mode_lists_no_change():
    assert replay(_START).server_changes == []
