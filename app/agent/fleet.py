"""The `fleet` tool's answer: a fleet's rows cut down to what an agent acts on.

Counts by state for every server; then the servers themselves, problems first
(crashed, down, stale, warming before serving and idle), each with only its
instance, engine, model, state, a short detail and gen_tok_s, as many as fit the
byte budget and at most MAX_LISTED; the rest are counted in `not_listed`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from sgwatch.agent.budget import ANSWER_BYTES, clean, dump
from sgwatch.fleet.row import FleetRow
from sgwatch.fleet.source import FleetSnapshot

MAX_LISTED = 8
DETAIL_CHARS = 80
# the order rows are listed in: what needs a look first
FIRST = ("crashed", "down", "stale", "warming", "serving", "idle")


def summary(name: str, snap: FleetSnapshot, limit: int = ANSWER_BYTES) -> dict[str, Any]:
    rows = sorted(snap.rows, key=lambda r: FIRST.index(r.state))  # stable: the source's order
    doc: dict[str, Any] = {"fleet": clean(name), "stale": snap.stale}
    if snap.problem:
        doc["problem"] = clean(snap.problem)
    if snap.warnings:
        doc["warnings"] = len(snap.warnings)
    doc["counts"] = dict(Counter(r.state for r in rows).most_common())
    listed: list[dict[str, Any]] = []
    doc["servers"] = listed
    for row in rows[:MAX_LISTED]:
        listed.append(_brief(row))
        # room kept for the count of those left out
        if len(dump(doc | {"not_listed": len(rows)}).encode()) > limit:
            listed.pop()
            break
    if len(rows) > len(listed):
        doc["not_listed"] = len(rows) - len(listed)
    return doc


def _brief(row: FleetRow) -> dict[str, Any]:
    out: dict[str, Any] = {"instance": clean(row.instance), "state": row.state}
    if row.engine:
        out["engine"] = row.engine
    if row.model:
        out["model"] = clean(row.model)
    if row.detail:
        out["detail"] = clean(row.detail, DETAIL_CHARS)
    if row.gen_tok_s is not None:
        out["gen_tok_s"] = round(row.gen_tok_s, 1)
    return out
