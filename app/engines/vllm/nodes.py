"""Which node of a multi-node vLLM server a command starts, or its settings say.

vLLM spreads data parallelism over hosts: every node is given the whole
`--data-parallel-size`, its own share `--data-parallel-size-local` and the head's
`--data-parallel-address`; the other nodes start `--headless` at their first rank,
`--data-parallel-start-rank`. Nodes hold equal shares, so a node's rank is its
first rank over its share.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sgwatch.core.cmdline import LaunchCommand, settings
from sgwatch.core.identity import as_int, as_str
from sgwatch.core.multinode import NodeOf
from sgwatch.engines.vllm.catalog import nearest_bundled
from sgwatch.engines.vllm.flags import parser_view

# The settings that differ from node to node: a flag edit made on one node is not
# carried to the others for these.
OWN = ("data_parallel_start_rank", "data_parallel_rank", "headless")


def node_count(args: Mapping[str, Any]) -> tuple[int, int] | None:
    """(node rank, node count) of the settings, None for a single node."""
    size = as_int(args.get("data_parallel_size"))
    local = as_int(args.get("data_parallel_size_local"))
    if size is None or local is None or not 0 < local < size:
        return None
    return (as_int(args.get("data_parallel_start_rank")) or 0) // local, -(-size // local)


def node_of(cmd: LaunchCommand) -> NodeOf | None:
    """Which node `cmd` starts; None for a single-node server."""
    asked = settings(parser_view(cmd), nearest_bundled(None).ref)
    found = node_count({k: _number(v) for k, v in asked.items()})
    addr = as_str(asked.get("data_parallel_address"))
    if found is None or addr is None:
        return None
    rank, nnodes = found
    return NodeOf(addr, nnodes, rank, OWN)


def _number(value: object) -> object:
    """A count as the command writes it ("4"), as the log would (4)."""
    return int(value) if isinstance(value, str) and value.isdigit() else value
