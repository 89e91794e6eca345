"""What each engine says of a run without naming its arguments to anyone else: the
model its command serves (the server picker's column), the parallelism shown."""

from __future__ import annotations

import pytest

from sgwatch.core.cmdline import parse_shell
from sgwatch.core.identity import RunIdentity
from sgwatch.engines import by_name


@pytest.mark.parametrize(
    ("engine", "command", "model"),
    [
        ("sglang", "python -m sglang.launch_server --model-path Q/A --tp 2", "Q/A"),
        ("sglang", "python -m sglang.launch_server --model-path=Q/B", "Q/B"),
        ("sglang", "python -m sglang.launch_server --model Q/C --port 1", "Q/C"),
        ("sglang", "sglang serve Q/D --port 1", "Q/D"),
        ("sglang", "python -m sglang.launch_server --port 1", None),
        ("vllm", "vllm serve V/A -tp 2", "V/A"),
        ("vllm", "python -m vllm.entrypoints.openai.api_server --model V/B", "V/B"),
        ("vllm", "python -m vllm.entrypoints.openai.api_server --port 1", None),
        ("sim", "python -m sgwatch.sim --model-path S/A --sim-speed 5", "S/A"),
        ("sim", "python -m sgwatch.sim vllm serve S/B --sim-speed 5", "S/B"),
    ],
)
def test_each_engine_reads_the_model_its_command_serves(engine, command, model):
    assert by_name(engine).model_of(parse_shell(command)) == model


def test_a_simulated_command_is_read_as_the_engine_it_imitates():
    sim = by_name("sim")
    two = "--model-path M --nnodes 2 --node-rank 1 --dist-init-addr h:5"
    assert str(sim.node_of(parse_shell(f"python -m sgwatch.sim {two}"))) == "node 1 of 2"
    assert sim.node_of(parse_shell("python -m sgwatch.sim vllm serve M --nnodes 2")) is None
    # shown before its log says: the engine imitated (a real engine shows its own name)
    assert sim.shown_as(parse_shell("python -m sgwatch.sim vllm serve M")) == "vllm"
    assert sim.shown_as(parse_shell("python -m sgwatch.sim --model-path M")) == "sglang"
    assert by_name("vllm").shown_as(parse_shell("vllm serve M")) == "vllm"


def test_the_parallelism_names_each_size_above_one_in_the_headers_order():
    assert RunIdentity(tp=8, pp=2, dp=2, ep=8).parallel == "TP8 DP2 PP2 EP8"
    assert RunIdentity(tp=1, dp=None).parallel == ""
