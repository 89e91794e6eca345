"""A fleet row as the table's cells read, and the orders the table can put rows in.

Pure: no widget. Every cell is plain text, so the table compares what it drew with
what it would draw and rewrites only the cells whose text changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sgwatch.fleet.row import FleetRow

# (label, width): the first two stay in view when the table scrolls sideways; the
# figures (from tok/s on) are right-aligned.
COLUMNS = (
    ("", 1), ("instance", 19), ("engine", 6), ("model", 16), ("state", 27), ("tok/s", 6),
    ("run/wait", 8), ("KV", 4), ("spec", 4), ("TTFT", 5), ("ITL", 5), ("GPU", 4),
    ("mem", 8), ("power", 5), ("since", 6),
)  # fmt: skip
FIRST_FIGURE = 5
STATE_COLUMN = 4
MARK = "●"  # a row whose state changed a moment ago

# Symbol first, so colour is never the only cue; the tone gives the colour.
STATES = {
    "serving": ("▶", "good"),
    "idle": ("✓", "good"),
    "warming": ("◆", "busy"),
    "down": ("⚠", "bad"),
    "crashed": ("✗", "bad"),
    "stale": ("⟳", "pending"),
}
# Sorting by state puts what needs a look first.
STATE_RANK = {"crashed": 0, "down": 1, "warming": 2, "stale": 3, "serving": 4, "idle": 5}


def state_text(row: FleetRow, full: bool = False) -> str:
    """`▶ serving`, `✗ crashed · its cause`; in the cell, a warmup by its progress
    alone (the symbol says warming), so that capture N/M and the ETA fit:
    `◆ graphs 12/36 ETA 18s`; `full` (the line under the table) spells the state."""
    symbol, _ = STATES.get(row.state, ("?", "pending"))
    if (row.state == "warming" or row.restarted_at is not None) and row.detail and not full:
        return f"{symbol} {row.detail}"  # a restart: `▶ restarted 14:02:11; ready in 48s`
    text = f"{symbol} {row.state}"
    return f"{text} · {row.detail}" if row.detail else text


def cells(row: FleetRow, since: str, marked: bool) -> tuple[str, ...]:
    return (
        MARK if marked else "",
        row.instance,
        row.engine or "",
        short_model(row.model),
        state_text(row),
        _num(row.gen_tok_s),
        _load(row.running, row.waiting),
        _pct(row.kv_pct),
        _accept(row.spec_accept),
        _seconds(row.ttft_p50_s),
        _seconds(row.itl_p50_s),
        _pct(row.gpu_util_pct),
        _mem(row.gpu_mem_used_mib, row.gpu_mem_total_mib),
        _power(row.gpu_power_w),
        since,
    )


def short_model(model: str | None) -> str:
    """A model path's last part: `meta-llama/Llama-3.1-8B` reads `Llama-3.1-8B`."""
    return (model or "").rstrip("/").rsplit("/", 1)[-1]


def _num(v: float | None) -> str:
    if v is None:
        return ""
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def _load(running: float | None, waiting: float | None) -> str:
    if running is None and waiting is None:
        return ""
    return "/".join("–" if v is None else f"{v:.0f}" for v in (running, waiting))


def _pct(v: float | None) -> str:
    return "" if v is None else f"{v:.0f}%"


def _accept(v: float | None) -> str:
    """Speculative decoding's accept length: both engines' fleet figure is one
    (tokens a step, 1 when no draft is accepted)."""
    return "" if v is None else f"{v:.2f}"


def _seconds(v: float | None) -> str:
    if v is None:
        return ""
    return f"{v * 1000:.0f}ms" if v < 1 else f"{v:.1f}s"


def _mem(used: float | None, total: float | None) -> str:
    if used is None:
        return ""
    gib = f"{used / 1024:.0f}"
    return f"{gib}/{total / 1024:.0f}G" if total else f"{gib}G"


def _power(w: float | None) -> str:
    if w is None:
        return ""
    return f"{w / 1000:.1f}kW" if w >= 1000 else f"{w:.0f}W"


@dataclass(frozen=True)
class Sort:
    name: str
    key: Callable[[FleetRow], object] | None  # None: the order the source gave
    descending: bool = False  # figures read best largest first


def _figure(v: float | None) -> float:
    return float("-inf") if v is None else v


def natural(text: str) -> list:
    """`10.0.0.9:8000` before `10.0.0.10:8000`, `gpu2` before `gpu10`: numbers as numbers."""
    return [int(part) if i % 2 else part for i, part in enumerate(_DIGITS.split(text))]


_DIGITS = re.compile(r"(\d+)")
SORTS = (
    Sort("listed", None),
    Sort("state", lambda r: (STATE_RANK.get(r.state, 9), natural(r.instance))),
    Sort("instance", lambda r: natural(r.instance)),
    Sort("model", lambda r: (short_model(r.model), natural(r.instance))),
    Sort("tok/s", lambda r: _figure(r.gen_tok_s), descending=True),
    Sort("KV", lambda r: _figure(r.kv_pct), descending=True),
    Sort("since", lambda r: _figure(r.changed_at), descending=True),
)
GROUPS: tuple[str | None, ...] = (None, "model", "job")


def group_of(row: FleetRow, by: str) -> str:
    value = short_model(row.model) if by == "model" else row.job
    return value or f"(no {by})"


def matches(row: FleetRow, needle: str) -> bool:
    """Every word of the filter is found in the instance, model, engine, state or job."""
    if not needle:
        return True
    hay = " ".join(
        (row.instance, row.model or "", row.engine or "", row.state, row.detail, row.job or "")
    ).lower()
    return all(word in hay for word in needle.lower().split())


def ordered(rows: Iterable[FleetRow], sort: Sort, reverse: bool) -> list[FleetRow]:
    rows = list(rows)
    if sort.key is None:
        return rows[::-1] if reverse else rows
    return sorted(rows, key=sort.key, reverse=sort.descending != reverse)


def summary(rows: Iterable[FleetRow]) -> str:
    """`20 servers: 14 serving · 3 warming · 1 crashed`, the states by rank."""
    rows = list(rows)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.state] = counts.get(r.state, 0) + 1
    parts = [f"{counts[s]} {s}" for s in sorted(counts, key=lambda s: STATE_RANK.get(s, 9))]
    noun = "server" if len(rows) == 1 else "servers"
    return f"{len(rows)} {noun}" + (": " + " · ".join(parts) if parts else "")


def counts(rows: Iterable[FleetRow]) -> str:
    """`5 · ◆1 ▶3 ✓1`: a group heading's count, and its states by symbol, by rank."""
    rows = list(rows)
    by: dict[str, int] = {}
    for r in rows:
        by[r.state] = by.get(r.state, 0) + 1
    ranked = sorted(by, key=lambda s: STATE_RANK.get(s, 9))
    return f"{len(rows)} · " + " ".join(f"{STATES.get(s, ('?',))[0]}{by[s]}" for s in ranked)
