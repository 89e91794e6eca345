"""The experiments table: one row per run of a host, from its history.

    rows = table(history.runs(), baseline_id, describe)   # describe: flag diff lines
    rows = sort_rows(rows, "bench_tok_s")
    csv_path, json_path = export(rows, folder, "ct129")

The facts come from the history records: the controller writes the warmup
detail when a run reaches ready (`ready_facts`), its log tok/s when it ends,
and a bench's summary when one completes (`bench_record`). A run without them
shows blanks, never a guess.
"""

from __future__ import annotations

import csv
import io
import json
import shlex
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from sgwatch.control.history import Run
from sgwatch.core.cmdline import LaunchCommand
from sgwatch.core.state import ServerState

if TYPE_CHECKING:
    from sgwatch.control.bench_probe import BenchResult, PhaseResult

Describe = Callable[[LaunchCommand, LaunchCommand], list[str]]


@dataclass(frozen=True, slots=True)
class Column:
    key: str  # a Row attribute
    label: str
    high_is_better: bool | None  # the first sort direction; None: oldest/shortest first


COLUMNS = (
    Column("time", "started", None),
    Column("outcome", "outcome", None),
    Column("diff", "flags vs baseline", None),
    Column("warmup_s", "warmup s", False),
    Column("graph_mem_gb", "graph GB", False),
    Column("kv_tokens", "KV tokens", True),
    Column("log_tok_s", "log tok/s", True),
    Column("bench_c1_tok_s", "bench c1", True),
    Column("bench_tok_s", "bench cN", True),
    Column("ttft_s", "TTFT", False),
    Column("accept_len", "accept", True),
    Column("compile_s", "compile", False),
)


@dataclass(frozen=True, slots=True)
class Row:
    id: str
    time: float
    outcome: str
    argv: list[str]  # masked
    diff: list[str]  # flag changes from the baseline row; [] for the baseline itself
    baseline: bool
    warmup_s: float | None
    phases: dict[str, float]  # seconds per warmup phase, in order
    compile_s: float | None  # torch.compile's time, as it said
    compile_cache: str | None  # "hit": its graphs came from the compile cache; "miss"
    weights_gb: float | None  # per GPU, the largest rank
    graph_mem_gb: float | None  # CUDA graphs, summed over the captures
    kv_tokens: int | None
    log_tok_s: float | None  # median gen tok/s of the decode log lines
    bench_c1_tok_s: float | None  # per-request decode tok/s, one request at a time
    bench_c1_spread: float | None  # its standard deviation over the requests
    bench_tok_s: float | None  # aggregate tok/s at the bench's highest concurrency
    bench_concurrency: int | None
    ttft_s: float | None  # p50, one request at a time
    accept_len: float | None  # speculative decoding: the bench's, else the log's
    best: bool = False


def ready_facts(s: ServerState) -> dict:
    """What a run's warmup showed, for its history record once it is ready."""
    phases: dict[str, float] = {}
    for p in s.phases:  # graph capture and compilation may alternate: a name recurs
        if p.seconds is not None:
            phases[p.name] = round(phases.get(p.name, 0.0) + p.seconds, 2)
    facts: dict = {"phases": phases}
    if s.weights.mem_usage_gb:
        facts["weights_gb"] = max(s.weights.mem_usage_gb.values())
    graphs = [c.mem_usage_gb for c in s.captures if c.mem_usage_gb is not None]
    if graphs:
        facts["graph_mem_gb"] = round(sum(graphs), 2)
    if s.kv_tokens is not None:
        facts["kv_tokens"] = s.kv_tokens
    if s.compile_cache is not None:
        facts["compile_cache"] = s.compile_cache
    if s.compile_s is not None:
        facts["compile_s"] = round(s.compile_s, 2)
    if s.server_startup_s is not None:  # its own clock, beside warmup_seconds
        facts["server_startup_s"] = round(s.server_startup_s, 2)
    return facts


def bench_record(result: BenchResult) -> dict:
    """A bench's summary for the history: the phases' figures, not every request."""
    return {
        "time": time.time(),
        "model": result.model,
        "max_tokens": result.max_tokens,
        "accept_length": result.accept_length,
        "phases": [
            {k: v for k, v in asdict(p).items() if k != "requests"}
            | {"requests": len(p.requests), "decode_tok_s_sd": _spread(p)}
            for p in result.phases
        ],
    }


def table(runs: Iterable[Run], baseline_id: str | None, describe: Describe) -> list[Row]:
    """Rows oldest first; the baseline is `baseline_id`'s run, else the oldest."""
    runs = list(runs)
    if not runs:
        return []
    base = next((r for r in runs if r.id == baseline_id), runs[0])
    rows = [
        _row(r, r is base, [] if r is base else describe(base.command, r.command)) for r in runs
    ]
    best = _best(rows)
    return [replace(r, best=True) if r.id == best else r for r in rows]


def _row(run: Run, baseline: bool, diff: list[str]) -> Row:
    x = run.extra
    bench = x.get("bench") if isinstance(x.get("bench"), dict) else {}
    phases = [p for p in bench.get("phases") or () if isinstance(p, dict)]
    c1 = next((p for p in phases if p.get("concurrency") == 1), None)
    top = max(phases, key=lambda p: p.get("concurrency") or 0, default=None)
    accept = bench.get("accept_length")
    return Row(
        id=run.id,
        time=run.time,
        outcome=run.outcome,
        argv=run.argv,
        diff=diff,
        baseline=baseline,
        warmup_s=run.warmup_seconds,
        phases=x.get("phases") if isinstance(x.get("phases"), dict) else {},
        compile_s=_num(x.get("compile_s")),
        compile_cache=x.get("compile_cache") if x.get("compile_cache") in ("hit", "miss") else None,
        weights_gb=_num(x.get("weights_gb")),
        graph_mem_gb=_num(x.get("graph_mem_gb")),
        kv_tokens=x.get("kv_tokens") if isinstance(x.get("kv_tokens"), int) else None,
        log_tok_s=run.tok_s,
        bench_c1_tok_s=_num(c1.get("decode_tok_s")) if c1 else None,
        bench_c1_spread=_num(c1.get("decode_tok_s_sd")) if c1 else None,
        bench_tok_s=_num(top.get("aggregate_tok_s")) if top else None,
        bench_concurrency=top.get("concurrency") if top else None,
        ttft_s=_num(c1.get("ttft_p50_s")) if c1 else None,
        accept_len=_num(accept) if accept is not None else _num(x.get("accept_len")),
    )


def _best(rows: list[Row]) -> str | None:
    """Highest single-request bench decode tok/s (every bench measures it alike, where
    the aggregate depends on the concurrency); without any bench, highest log tok/s."""
    for key in ("bench_c1_tok_s", "bench_tok_s", "log_tok_s"):
        scored = [r for r in rows if getattr(r, key) is not None]
        if scored:
            return max(scored, key=lambda r: getattr(r, key)).id
    return None


def sort_rows(rows: list[Row], key: str, reverse: bool = False) -> list[Row]:
    """By a column, best first where a column has a better end; blanks always last."""
    col = next(c for c in COLUMNS if c.key == key)
    desc = bool(col.high_is_better) != reverse

    def value(r: Row):
        v = getattr(r, key)
        return "\n".join(v) if isinstance(v, list) else v

    known = [r for r in rows if value(r) is not None]
    blank = [r for r in rows if value(r) is None]
    return sorted(known, key=value, reverse=desc) + blank


# -- export --------------------------------------------------------------------

_FIELDS = [
    "id", "started", "outcome", "baseline", "best", "diff", "warmup_s", "phases", "compile_s",
    "compile_cache", "weights_gb",
    "graph_mem_gb", "kv_tokens", "log_tok_s", "bench_c1_tok_s", "bench_c1_spread", "bench_tok_s",
    "bench_concurrency", "ttft_s", "accept_len", "command",
]  # fmt: skip


def records(rows: Iterable[Row]) -> list[dict]:
    """One plain dict per row (the JSON export; the CSV flattens lists)."""
    out = []
    for r in rows:
        d = asdict(r)
        d["started"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(r.time))
        d["command"] = shlex.join(d.pop("argv"))
        out.append({k: d[k] for k in _FIELDS})
    return out


def to_csv(rows: Iterable[Row]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, _FIELDS, lineterminator="\n")
    w.writeheader()
    for rec in records(rows):
        rec["diff"] = "; ".join(rec["diff"])
        rec["phases"] = "; ".join(f"{k}={v:g}" for k, v in rec["phases"].items())
        w.writerow({k: "" if v is None else v for k, v in rec.items()})
    return buf.getvalue()


def export(rows: list[Row], folder: Path, stem: str) -> tuple[Path, Path]:
    """`STEM-experiments.csv` and `.json` in `folder`; returns both paths."""
    folder.mkdir(parents=True, exist_ok=True)
    csv_path = folder / f"{stem}-experiments.csv"
    json_path = folder / f"{stem}-experiments.json"
    csv_path.write_text(to_csv(rows), encoding="utf-8")
    json_path.write_text(json.dumps(records(rows), indent=2) + "\n", encoding="utf-8")
    return csv_path, json_path


def _spread(phase: PhaseResult) -> float | None:
    """The standard deviation of a phase's per-request decode tok/s (None under two)."""
    rates = [r.decode_tok_s for r in phase.requests if r.decode_tok_s is not None]
    return round(statistics.stdev(rates), 2) if len(rates) >= 2 else None


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
