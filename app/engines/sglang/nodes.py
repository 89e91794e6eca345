"""Which node of a multi-node SGLang server a launch command starts.

SGLang spreads one server over several hosts with `--nnodes N --node-rank I` and the
same `--dist-init-addr` on every node: that address is what tells the nodes of one
server apart from another's.
"""

from __future__ import annotations

from sgwatch.core.cmdline import LaunchCommand, value_of
from sgwatch.core.multinode import NodeOf

_ADDR = ("--dist-init-addr", "--nccl-init-addr")  # the second: SGLang before 0.4
OWN = ("node_rank",)  # what differs from node to node


def node_of(cmd: LaunchCommand) -> NodeOf | None:
    """Which node `cmd` starts; None for a single-node server."""
    try:
        nnodes = int(str(value_of(cmd, "--nnodes")))
        rank = int(str(value_of(cmd, "--node-rank")))
    except ValueError:
        return None
    addr = next((str(v) for a in _ADDR if isinstance(v := value_of(cmd, a), str)), None)
    if nnodes < 2 or addr is None:
        return None
    return NodeOf(addr, nnodes, rank, OWN)
