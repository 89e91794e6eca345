"""A fleet snapshot as JSON: what `sgwatch fleet --json` prints, one object per refresh."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from sgwatch.fleet.source import FleetSnapshot


def snapshot_json(name: str, snap: FleetSnapshot) -> dict[str, Any]:
    """Every FleetRow field per server, null when unknown."""
    return {
        "fleet": name,
        "fetched_at": snap.fetched_at,
        "stale": snap.stale,
        "problem": snap.problem,
        "warnings": list(snap.warnings),
        "servers": [asdict(r) for r in snap.rows],
    }
