"""Effective vs requested, on dumps the simulator prints and on real 0.4.x logs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sgwatch.core.cmdline import MISSING, parse, parse_shell
from sgwatch.engines import for_command
from sgwatch.engines.settings_dump import parse_settings
from sgwatch.engines.sglang.catalog import load_bundled, nearest_bundled
from sgwatch.engines.sglang.effective import differences, requested, same
from sgwatch.engines.shapes.flags import CUDA_GRAPHS, MEMORY

VL = "Qwen/Qwen2.5-VL-7B-Instruct"
TEXT = "Qwen/Qwen2.5-7B-Instruct"


def sim_dump(args: list[str], tmp_path: Path) -> tuple[list[str], str]:
    """Start the simulator, read its log up to the server_args line, stop it."""
    argv = [sys.executable, "-m", "sgwatch.sim", *args, "--sim-speed", "200", "--port", "0"]
    env = {**os.environ, "SGWATCH_SIM_STATE": str(tmp_path)}
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    try:
        for line in proc.stdout:
            if "server_args=" in line:
                return argv, line.split("server_args=", 1)[1]
        pytest.fail(f"the simulator printed no server_args line (exit {proc.wait()})")
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def sim_differences(args: list[str], tmp_path: Path):
    argv, dump = sim_dump(args, tmp_path)
    cmd = parse(argv)
    catalog = nearest_bundled(for_command(cmd).command_version(cmd))
    return catalog, {d.setting: d for d in differences(cmd, parse_settings(dump), catalog)}


def test_multimodal_model_turns_piecewise_graphs_off_by_itself(tmp_path):
    catalog, found = sim_differences(
        ["--model-path", VL, "--tp", "2", "--enable-metrics", "--decode-log-interval", "0"],
        tmp_path,
    )
    assert catalog.version == "0.5.10"  # the simulator's default log format is 0.5
    piecewise = found["disable_piecewise_cuda_graph"]
    assert (piecewise.reason, piecewise.requested, piecewise.effective, piecewise.default) == (
        "auto",
        MISSING,
        True,
        False,
    )
    assert (piecewise.option, piecewise.group) == ("--disable-piecewise-cuda-graph", CUDA_GRAPHS)
    memory = found["mem_fraction_static"]
    assert memory.reason == "auto" and 0.5 < memory.effective < 1 and memory.group == MEMORY
    # Asked for 0, runs with 1: the server overrode the command.
    interval = found["decode_log_interval"]
    assert (interval.reason, interval.requested, interval.effective) == ("overridden", 0, 1)
    # Asked for and honoured: not news.
    assert not {"tp_size", "enable_metrics", "model_path"} & found.keys()


def test_text_model_keeps_piecewise_graphs(tmp_path):
    _, found = sim_differences(["--model-path", TEXT], tmp_path)
    assert "disable_piecewise_cuda_graph" not in found
    assert found["attention_backend"].effective == "fa3"  # "not specified, use fa3"


def test_newest_format_dict_dump(tmp_path):
    catalog, found = sim_differences(["--model-path", VL, "--sim-format", "0.5.23"], tmp_path)
    assert catalog.version == "0.5.23"
    prefill = found["cuda_graph_backend_prefill"]
    assert (prefill.reason, prefill.effective, prefill.group) == ("auto", "disabled", CUDA_GRAPHS)
    _, asked = sim_differences(
        ["--model-path", VL, "--sim-format", "0.5.23", "--cuda-graph-backend-prefill", "breakable"],
        tmp_path,
    )
    assert "cuda_graph_backend_prefill" not in asked  # a locked choice is kept


# -- real 0.4.x logs ---------------------------------------------------------------------


def dump_of(corpus: Path, pattern: str) -> dict:
    (log,) = corpus.glob(pattern)
    line = next(ln for ln in log.read_text(errors="replace").splitlines() if "server_args=" in ln)
    return parse_settings(line.split("server_args=", 1)[1])


def test_real_0_4_4_dump(corpus):
    dump = dump_of(corpus, "sglang-0.4.4-*.log")
    catalog = load_bundled("0.4.4.post1")
    cmd = parse_shell(
        "python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-8B-Instruct "
        "--host 0.0.0.0 --port 32155 --disable-cuda-graph"
    )
    found = {d.setting: d for d in differences(cmd, dump, catalog)}
    auto = {k: d.effective for k, d in found.items() if d.reason == "auto"}
    assert auto["mem_fraction_static"] == 0.88
    assert auto["chunked_prefill_size"] == 8192
    assert auto["cuda_graph_max_bs"] == 160
    assert auto["attention_backend"] == "flashinfer"
    assert not {"model_path", "host", "port", "disable_cuda_graph", "tp_size"} & found.keys()
    # A command that asked for other values learns the server did not run them.
    other = parse_shell(
        "python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-8B-Instruct "
        "--tp 2 --mem-fraction 0.7"
    )
    overridden = {
        d.setting: (d.requested, d.effective)
        for d in differences(other, dump, catalog)
        if d.reason == "overridden"
    }
    assert overridden == {"tp_size": (2, 1), "mem_fraction_static": (0.7, 0.88)}


def test_real_0_4_6_dump_read_without_a_command(corpus):
    dump = dump_of(corpus, "sglang-0.4.6.post2-*.log")
    found = {d.setting: d for d in differences(None, dump, load_bundled("0.4.6.post2"))}
    assert found["mem_fraction_static"].effective == 0.88
    assert found["cuda_graph_max_bs"].effective == 8
    assert found["chunked_prefill_size"].effective == 2048
    assert "enable_multimodal" not in found  # an auto switch left off
    assert "attention_backend" not in found  # None in the dump: nothing was chosen there
    assert all(d.reason == "auto" for d in found.values())


# -- the pieces ------------------------------------------------------------------------------


def test_requested_values_are_typed_like_argparse():
    catalog = load_bundled("0.5.23")
    cmd = parse_shell(
        "sglang serve Qwen/Qwen3-8B --tp 2 --mem-fraction-static=0.8 --cuda-graph-bs-decode 1 2 "
        "--enable-metrics --no-dllm-fdfo --tp-size x --unknown-flag 3 --cuda-graph-max-bs 8"
    )
    assert requested(cmd, catalog) == {
        "model_path": "Qwen/Qwen3-8B",
        "tp_size": "x",  # refused by the parser: kept as written, last one wins
        "mem_fraction_static": 0.8,
        "cuda_graph_bs_decode": [1, 2],
        "enable_metrics": True,
        "dllm_fdfo": False,
    }


def test_a_retired_spelling_requests_the_setting_it_writes():
    catalog = load_bundled("0.5.19")
    cmd = parse_shell(
        "python -m sglang.launch_server --model-path m --disable-piecewise-cuda-graph"
    )
    assert requested(cmd, catalog)["cuda_graph_backend_prefill"] == "disabled"
    kept = {"model_path": "m", "cuda_graph_backend_prefill": "disabled"}
    assert differences(cmd, kept, catalog) == []
    changed = differences(cmd, {**kept, "cuda_graph_backend_prefill": "full"}, catalog)
    assert [(d.setting, d.reason, d.option) for d in changed] == [
        ("cuda_graph_backend_prefill", "overridden", "--cuda-graph-backend-prefill")
    ]


def test_settings_outside_the_catalog_are_not_guessed_at():
    catalog = load_bundled("0.5.23")
    dump = {"model_path": "m", "not_a_flag": 3, "tp_size": 1, "enable_lora": None}
    assert differences(parse_shell("sglang serve m"), dump, catalog) == []


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (0.8, 0.8000000000001, True),
        (1, 1.0, True),
        ("4096", 4096, True),
        ("x", 1, False),
        (None, "None", True),
        (None, "x", False),
        (True, 1, False),
        (False, False, True),
        ([1, 2], (1, 2), True),
        ([1, 2], [1], False),
        ({"a": [1]}, {"a": (1,)}, True),
        ({"a": 1}, {"b": 1}, False),
        ("auto", "auto", True),
    ],
)
def test_same(a, b, equal):
    assert same(a, b) is equal
    assert same(b, a) is equal
