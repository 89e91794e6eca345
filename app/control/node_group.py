"""A multi-node server: the watched servers that are the nodes of one server.

An engine spreads one server over several hosts, each node started with its rank
and the same rendezvous address (Engine.node_of reads them from the command). Such
nodes are one server to the user: a flag changed on one is changed on all, and a
restart stops every node (highest rank first) before starting any, then starts
rank 0 first, since it hosts the rendezvous the others join. A node that cannot be
stopped or started is put back as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sgwatch.control.controller import Controller
from sgwatch.control.restart import Launched, RestartFailed
from sgwatch.core.cmdline import (
    Change,
    LaunchCommand,
    Resolver,
    diff,
    disable,
    enable,
    set_value,
    unset,
)
from sgwatch.core.multinode import NodeOf


@dataclass(frozen=True, slots=True)
class NodeGroup:
    node: NodeOf  # of rank 0's point of view: addr and nnodes
    members: tuple[tuple[int, Controller], ...]  # (rank, controller), by rank

    @property
    def complete(self) -> bool:
        return [r for r, _ in self.members] == list(range(self.node.nnodes))

    def describe(self) -> str:
        names = ", ".join(f"{c.session.watch.label} (rank {r})" for r, c in self.members)
        return f"{self.node.nnodes}-node server at {self.node.addr}: {names}"


def group_of(ctl: Controller, controllers: Sequence[Controller | None]) -> NodeGroup | None:
    """The nodes `ctl`'s server shares its rendezvous with, itself included."""
    mine = ctl.engine.node_of(ctl.current) if ctl.current is not None else None
    if mine is None:
        return None
    members = []
    for other in controllers:
        if other is None or other.current is None:
            continue
        theirs = other.engine.node_of(other.current)
        if theirs is not None and (theirs.addr, theirs.nnodes) == (mine.addr, mine.nnodes):
            members.append((theirs.rank, other))
    return NodeGroup(mine, tuple(sorted(members, key=lambda m: m[0])))


def carry(
    changes: Sequence[Change], cmd: LaunchCommand, resolve: Resolver, own: Sequence[str]
) -> LaunchCommand:
    """The flag edits made on one node's command, made on another's, but for the
    settings each node keeps its own (`own`: its rank)."""
    for c in changes:
        if c.key.startswith("(") or c.key.startswith("env ") or c.key in own:
            continue
        if c.after is None:
            cmd = unset(cmd, (c.before or ("",))[0].split("=", 1)[0], resolve)
            continue
        name, eq, inline = c.after[0].partition("=")
        values = [inline, *c.after[1:]] if eq else list(c.after[1:])
        ref = resolve(name)
        if ref is not None and not ref.takes_value:
            switch = disable if name == ref.negation else enable
            cmd = switch(cmd, name, resolve)
        else:
            cmd = set_value(cmd, name, values, resolve)
    return cmd


async def restart_nodes(
    group: NodeGroup, edited: Controller, new: LaunchCommand, grace_s: float = 30.0
) -> list[Launched]:
    """Restart every node with the edits made on `edited` (RestartFailed says why not;
    before any node is stopped, every new command has passed its host's preflight)."""
    if not group.complete:
        ranks = [r for r, _ in group.members]
        raise RestartFailed(
            "nodes",
            f"watching ranks {ranks} of {group.node.nnodes}: open every node's host to restart",
        )
    catalog = (await edited.catalog()).catalog
    changes = diff(edited.current, new, catalog.ref)
    plans = [
        (
            rank,
            ctl,
            new if ctl is edited else carry(changes, ctl.current, catalog.ref, group.node.own),
        )
        for rank, ctl in group.members
    ]
    for rank, ctl, cmd in plans:
        check = await ctl.preflight(cmd)
        if not check.ok:
            why = "; ".join(p.message for p in check.errors)
            raise RestartFailed("preflight", f"rank {rank} ({ctl.session.watch.label}): {why}")
    stopped: list[tuple[int, Controller, LaunchCommand]] = []
    try:
        for rank, ctl, cmd in reversed(plans):
            old = ctl.current
            await ctl.restart(cmd, grace_s=grace_s, phase="stop")
            stopped.append((rank, ctl, old))
    except RestartFailed:
        for _, ctl, old in stopped:  # put back what was stopped, as it was
            await ctl.restart(old, phase="launch")
        raise
    return [await ctl.restart(cmd, phase="launch") for _, ctl, cmd in plans]
