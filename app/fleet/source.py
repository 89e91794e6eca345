"""Where a fleet's rows come from: a Prometheus query API, or SSH hosts.

A source answers one snapshot per refresh. The front ends (fleet table, `sgwatch
fleet --json/--wait`, the MCP `fleet` tool) know only this shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from sgwatch.fleet.row import FleetRow


@dataclass(frozen=True)
class FleetSnapshot:
    rows: tuple[FleetRow, ...]
    fetched_at: float  # wall clock (epoch s) when this refresh ended
    stale: bool = False  # the source did not answer: rows are the last seen
    problem: str | None = None  # one line: why stale, or what failed
    warnings: tuple[str, ...] = field(default=())  # the source's own (partial results)


class FleetSource(Protocol):
    name: str  # the fleet's name, or the URL for a one-off look

    async def snapshot(self) -> FleetSnapshot:
        """One refresh. Never raises for a source that does not answer: stale instead."""
        ...

    async def unscraped(self) -> tuple[str, ...]:
        """The servers the source knows of but has no figures for yet (a scrape target
        found but not yet scraped): none where the source cannot tell."""
        ...

    async def close(self) -> None: ...
