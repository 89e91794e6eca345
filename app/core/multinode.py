"""One node of a server spread over several hosts, as its launch command says.

The engine reads it from the command (Engine.node_of): the nodes of one server
share a rendezvous address, which tells them apart from another server's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class NodeOf:
    addr: str  # the rendezvous every node of the server is given
    nnodes: int
    rank: int
    # The settings (flag catalog names) each node keeps its own: a flag edit made on
    # one node is carried to the others except for these.
    own: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"node {self.rank} of {self.nnodes}"
