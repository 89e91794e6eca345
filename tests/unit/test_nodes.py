"""Multi-node servers: which node a command starts, and one node's edits made on another."""

from __future__ import annotations

from sgwatch.control.node_group import carry
from sgwatch.core.cmdline import diff, enable, parse, set_value, unset
from sgwatch.engines import by_name
from sgwatch.engines.sglang.catalog import load_bundled
from sgwatch.engines.vllm.catalog import load_bundled as load_vllm

CAT = load_bundled("0.5.10")
BASE = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "8"]
SGLANG, VLLM = by_name("sglang"), by_name("vllm")
VLLM_BASE = ["vllm", "serve", "m", "-tp", "2", "--data-parallel-size", "4", "-dpl", "2",
             "--data-parallel-address", "127.0.0.2"]  # fmt: skip


def node(rank: int, *extra: str):
    return parse([*BASE, "--nnodes", "2", "--node-rank", str(rank),
                  "--dist-init-addr", "127.0.0.1:5000", *extra])  # fmt: skip


def test_node_of_reads_rank_count_and_rendezvous():
    n = SGLANG.node_of(node(1))
    assert (n.addr, n.nnodes, n.rank, str(n)) == ("127.0.0.1:5000", 2, 1, "node 1 of 2")
    assert SGLANG.node_of(parse(BASE)) is None
    assert SGLANG.node_of(parse([*BASE, "--nnodes", "1", "--node-rank", "0"])) is None
    assert VLLM.node_of(node(1)) is None  # SGLang's flags are not vLLM's


def test_a_vllm_node_is_its_first_data_parallel_rank_over_its_share():
    head = VLLM.node_of(parse(VLLM_BASE))
    other = VLLM.node_of(parse([*VLLM_BASE, "--headless", "--data-parallel-start-rank", "2"]))
    assert (head.addr, head.nnodes, head.rank) == ("127.0.0.2", 2, 0)
    assert (other.addr, other.nnodes, other.rank) == ("127.0.0.2", 2, 1)
    assert "data_parallel_start_rank" in other.own and "headless" in other.own
    assert VLLM.node_of(parse(["vllm", "serve", "m", "-dp", "4"])) is None  # one host
    assert VLLM.node_of(parse([*VLLM_BASE[:-2]])) is None  # no head to meet at


def test_edits_on_rank_0_carry_to_rank_1_and_keep_its_rank():
    zero, one = node(0, "--disable-cuda-graph"), node(1, "--disable-cuda-graph")
    edited = enable(zero, "--enable-metrics", CAT.ref)
    edited = set_value(edited, "--mem-fraction-static", "0.8", CAT.ref)
    edited = unset(edited, "--disable-cuda-graph", CAT.ref)
    carried = carry(diff(zero, edited, CAT.ref), one, CAT.ref, SGLANG.node_of(one).own)
    argv = carried.argv
    assert argv[argv.index("--node-rank") + 1] == "1"
    assert "--enable-metrics" in argv and "--disable-cuda-graph" not in argv
    assert argv[argv.index("--mem-fraction-static") + 1] == "0.8"
    assert diff(one, carried, CAT.ref) == diff(zero, edited, CAT.ref)


def test_a_vllm_node_keeps_its_own_start_rank():
    cat = load_vllm("0.11.0")
    head = parse(VLLM_BASE)
    other = parse([*VLLM_BASE, "--headless", "--data-parallel-start-rank", "2"])
    edited = set_value(head, "--gpu-memory-utilization", "0.8", cat.ref)
    edited = set_value(edited, "--data-parallel-start-rank", "0", cat.ref)  # the head's own
    carried = carry(diff(head, edited, cat.ref), other, cat.ref, VLLM.node_of(other).own)
    assert carried.argv == [*other.argv, "--gpu-memory-utilization", "0.8"]
    assert carry(diff(head, edited, cat.ref), other, cat.ref, ()).argv != carried.argv
