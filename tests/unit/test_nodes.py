"""Multi-node servers: which node a command starts, and one node's edits made on another."""

from __future__ import annotations

from sgwatch.control.node_group import carry
from sgwatch.core.cmdline import diff, enable, parse, set_value, unset
from sgwatch.core.multinode import node_of
from sgwatch.engines.sglang.catalog import load_bundled

CAT = load_bundled("0.5.10")
BASE = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "8"]


def node(rank: int, *extra: str):
    return parse([*BASE, "--nnodes", "2", "--node-rank", str(rank),
                  "--dist-init-addr", "127.0.0.1:5000", *extra])  # fmt: skip


def test_node_of_reads_rank_count_and_rendezvous():
    n = node_of(node(1))
    assert (n.addr, n.nnodes, n.rank, str(n)) == ("127.0.0.1:5000", 2, 1, "node 1 of 2")
    assert node_of(parse(BASE)) is None
    assert node_of(parse([*BASE, "--nnodes", "1", "--node-rank", "0"])) is None


def test_edits_on_rank_0_carry_to_rank_1_and_keep_its_rank():
    zero, one = node(0, "--disable-cuda-graph"), node(1, "--disable-cuda-graph")
    edited = enable(zero, "--enable-metrics", CAT.ref)
    edited = set_value(edited, "--mem-fraction-static", "0.8", CAT.ref)
    edited = unset(edited, "--disable-cuda-graph", CAT.ref)
    carried = carry(diff(zero, edited, CAT.ref), one, CAT.ref)
    argv = carried.argv
    assert argv[argv.index("--node-rank") + 1] == "1"
    assert "--enable-metrics" in argv and "--disable-cuda-graph" not in argv
    assert argv[argv.index("--mem-fraction-static") + 1] == "0.8"
    assert diff(one, carried, CAT.ref) == diff(zero, edited, CAT.ref)
