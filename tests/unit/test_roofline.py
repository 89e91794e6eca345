"""The bandwidth roofline on known figures."""

import pytest

from sgwatch.core.gpu_bandwidth import lookup
from sgwatch.core.roofline import GIB, roofline

# A 27 B-parameter bf16 model: 54e9 bytes, half per rank at TP 2. SGLang's log prints
# that rank's share in GiB: `Load weight end. … mem usage=25.15 GB.`
RANK_GIB = 27e9 / GIB
A6000_PAIR = ["NVIDIA RTX A6000", "NVIDIA RTX A6000"]


def test_two_a6000_at_tp2_with_a_27b_bf16_model():
    r = roofline(24.0, gpu_names=A6000_PAIR, weights_gib={"TP0": RANK_GIB, "TP1": RANK_GIB}, tp=2)
    assert r.ceiling_tok_s == pytest.approx(768 / 27, rel=1e-6)  # 28.44 tok/s
    assert r.percent == pytest.approx(100 * 24.0 / (768 / 27))
    assert r.assumptions == (
        "batch-1 decode, weights 25.15 GiB/GPU read once per token (KV cache not counted), "
        "768 GB/s per GPU (RTX A6000), TP 2"
    )
    assert r.said() == (
        "measured 24.0 tok/s = 84 % of the bandwidth ceiling 28.4 tok/s: "
        "memory bound, CUDA-graph flags will not move decode much"
    )
    assert r.said("bench at concurrency 1").startswith(
        "measured 24.0 tok/s (bench at concurrency 1) = 84 % of the bandwidth ceiling"
    )


def test_far_below_the_ceiling_says_overheads_cost_decode_not_bandwidth():
    r = roofline(8.0, gpu_names=A6000_PAIR, weights_gib={"TP0": RANK_GIB}, tp=2)
    assert r.said().endswith(
        "= 28 % of the bandwidth ceiling 28.4 tok/s: "
        "well below the ceiling: per-step overheads (launches, scheduling) cost decode"
    )


def test_the_heaviest_rank_sets_the_pace_and_tp_defaults_to_the_ranks_seen():
    r = roofline(None, gpu_names=["NVIDIA H200"], weights_gib={"TP0": 10.0, "TP1": 12.5})
    assert r.ceiling_tok_s == pytest.approx(4800e9 / (12.5 * GIB))
    assert r.assumptions.endswith("4800 GB/s per GPU (H200), TP 2")
    assert r.percent is None
    assert r.said().endswith("; no batch-1 measurement yet")


def test_speculative_decoding_scales_the_ceiling_by_the_accept_length_and_says_so():
    plain = roofline(60.0, gpu_names=A6000_PAIR, weights_gib={"TP0": RANK_GIB}, tp=2)
    spec = roofline(60.0, gpu_names=A6000_PAIR, weights_gib={"TP0": RANK_GIB}, tp=2, accept_len=2.5)
    assert spec.ceiling_tok_s == pytest.approx(plain.ceiling_tok_s * 2.5)
    assert spec.percent == pytest.approx(plain.percent / 2.5)
    assert "× accept length 2.50 (speculative decoding)" in spec.assumptions
    assert "ceiling 71.1 tok/s at accept length 2.50:" in spec.said()


def test_the_draft_model_is_read_once_per_draft_step_on_top_of_the_target():
    # NEXTN with 3 steps: the 0.76 GiB draft adds 3 × 0.76 GiB to each step's reads.
    weights, draft = {"TP0": RANK_GIB, "TP1": RANK_GIB}, {"TP0": 0.76, "TP1": 0.74}
    r = roofline(
        55.0, gpu_names=A6000_PAIR, weights_gib=weights, tp=2, accept_len=3.0,
        draft_gib=draft, draft_steps=3,
    )  # fmt: skip
    read = (RANK_GIB + 3 * 0.76) * GIB
    assert r.ceiling_tok_s == pytest.approx(3.0 * 768e9 / read)  # 78.2 tok/s
    assert r.percent == pytest.approx(100 * 55.0 / r.ceiling_tok_s)  # 70 %: plausible
    assert "target weights 25.15 GiB/GPU + draft 0.76 GiB × 3 steps" in r.assumptions
    assert r.said() == (
        "measured 55.0 tok/s = 70 % of the bandwidth ceiling 78.2 tok/s at accept length 3.00: "
        "memory bound, CUDA-graph flags will not move decode much"
    )


def test_the_config_overrides_the_table_and_says_where_the_figure_came_from():
    r = roofline(10.0, gpu_names=A6000_PAIR, weights_gib={"TP0": RANK_GIB}, bandwidth_gb_s=700.0)
    assert r.ceiling_tok_s == pytest.approx(700 / 27)
    assert "700 GB/s per GPU (config gpu_bandwidth_gbps)" in r.assumptions


def test_an_unknown_gpu_model_asks_for_the_config_value():
    r = roofline(10.0, gpu_names=["NVIDIA Mystery X1"], weights_gib={"TP0": 20.0})
    assert (r.ceiling_tok_s, r.percent) == (None, None)
    assert r.assumptions == (
        "unknown GPU model 'NVIDIA Mystery X1': set gpu_bandwidth_gbps (GB/s) in the config"
    )
    assert r.said().startswith("roofline: unknown GPU model")
    # With the override the same host gets a ceiling.
    fixed = roofline(
        10.0, gpu_names=["NVIDIA Mystery X1"], weights_gib={"TP0": 20.0}, bandwidth_gb_s=1000
    )
    assert fixed.ceiling_tok_s == pytest.approx(1000e9 / (20 * GIB))


def test_no_gpu_names_or_no_weight_line_yet_say_what_is_missing():
    assert "no GPU model known" in roofline(1.0, gpu_names=[], weights_gib={"TP0": 1}).assumptions
    r = roofline(1.0, gpu_names=A6000_PAIR, weights_gib={})
    assert r.ceiling_tok_s is None and "Load weight end" in r.assumptions


def test_mixed_cards_use_the_slowest():
    r = roofline(
        None, gpu_names=["NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe"], weights_gib={"TP0": 1}
    )
    assert "2000 GB/s per GPU (H100 PCIe, the slowest of the GPUs)" in r.assumptions


@pytest.mark.parametrize(
    ("name", "model", "gb_s"),
    [
        ("NVIDIA H200", "H200", 4800),
        ("NVIDIA H200 NVL", "H200", 4800),
        ("NVIDIA H100 80GB HBM3", "H100 SXM", 3350),
        ("NVIDIA H100 PCIe", "H100 PCIe", 2000),
        ("NVIDIA H100 NVL", "H100 NVL", 3900),
        ("NVIDIA H20", "H20", 4000),
        ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM", 2039),
        ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe", 1935),
        ("NVIDIA A100-SXM4-40GB", "A100 40GB", 1555),
        ("NVIDIA A100-PCIE-40GB", "A100 40GB", 1555),
        ("NVIDIA RTX A6000", "RTX A6000", 768),
        ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada", 960),
        ("NVIDIA GeForce RTX 4090", "RTX 4090", 1008),
        ("NVIDIA L40S", "L40S", 864),
        ("NVIDIA L40", "L40", 864),
        ("NVIDIA L4", "L4", 300),
        ("NVIDIA A10G", "A10G", 600),
        ("NVIDIA B200", "B200", 8000),
        ("Tesla T4", "T4", 320),
        ("Tesla V100-SXM2-32GB", "V100", 900),
    ],
)
def test_nvidia_smi_names_map_to_their_spec_bandwidth(name, model, gb_s):
    bw = lookup(name)
    assert bw is not None and (bw.model, bw.gb_s) == (model, gb_s)


def test_names_not_in_the_table_are_unknown():
    assert lookup("NVIDIA Graphics Device") is None
    assert lookup("AMD Instinct MI300X") is None
