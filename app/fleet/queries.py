"""The PromQL of one fleet refresh: one query per figure, whatever the fleet's size.

Each figure's query covers every engine at once: each engine's own expression
(its series names, from its FleetSeries) is tagged with the engine's name by
`label_replace`, and the engines' parts are joined by `or`. Every part is
aggregated `by (instance, job, <model label>)`, so a server with several ranks
or data-parallel engines is one sample per model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sgwatch.engines.base import Engine, FleetSeries

ENGINE_LABEL = "sgwatch_engine"  # the tag each engine's part of a query carries
MEASURE_LABEL = "sgwatch_measure"  # the tag of each part of the GPU query

# dcgm-exporter's default counters (its etc/default-counters.csv), not an engine's.
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"  # percent
GPU_FB_USED = "DCGM_FI_DEV_FB_USED"  # MiB
GPU_FB_FREE = "DCGM_FI_DEV_FB_FREE"  # MiB
GPU_POWER = "DCGM_FI_DEV_POWER_USAGE"  # W
GPU_BY = "Hostname, instance"  # a node's GPUs, joined to its servers by host
# The Prometheus client libraries' standard process metric, not an engine's: vLLM's
# default registry serves it, SGLang's multiprocess registry does not.
PROCESS_START = "process_start_time_seconds"
RESTART_WINDOW = "5m"  # how far back a restart that Prometheus never saw down is told


@dataclass(frozen=True, slots=True)
class Query:
    figure: str  # the FleetRow field it fills ("up" and "gpu" are read apart)
    promql: str


def selector(name: str, matchers: Sequence[str]) -> str:
    return f"{name}{{{', '.join(matchers)}}}" if matchers else name


def _by(series: FleetSeries) -> str:
    return f"instance, job, {series.model_label}"


# Each figure: (series, matchers, window) -> the engine's expression, or None.
Build = Callable[[FleetSeries, Sequence[str], str], str | None]


def _gen(s: FleetSeries, m: Sequence[str], w: str) -> str:
    return f"sum by ({_by(s)}) (rate({selector(s.generation_tokens, m)}[{w}]))"


def _gauge_sum(name: Callable[[FleetSeries], str]) -> Build:
    return lambda s, m, _w: f"sum by ({_by(s)}) ({selector(name(s), m)})"


def _kv(s: FleetSeries, m: Sequence[str], _w: str) -> str:
    return f"avg by ({_by(s)}) ({selector(s.kv_usage, m)})"


def _accept(s: FleetSeries, m: Sequence[str], w: str) -> str | None:
    if s.accept_length:
        return f"avg by ({_by(s)}) ({selector(s.accept_length, m)})"
    if s.accept_counters:
        accepted, drafts = (
            f"sum by ({_by(s)}) (rate({selector(n, m)}[{w}]))" for n in s.accept_counters
        )
        return f"1 + {accepted} / {drafts}"
    return None


def _p50(names: Callable[[FleetSeries], tuple[str, ...]]) -> Build:
    def build(s: FleetSeries, m: Sequence[str], w: str) -> str | None:
        rates = (f"rate({selector(n + '_bucket', m)}[{w}])" for n in names(s))
        parts = [f"histogram_quantile(0.5, sum by (le, {_by(s)}) ({r}))" for r in rates]
        return " or ".join(parts) or None

    return build


FIGURES: dict[str, Build] = {
    "gen_tok_s": _gen,
    "running": _gauge_sum(lambda s: s.running),
    "waiting": _gauge_sum(lambda s: s.waiting),
    "kv_pct": _kv,
    "spec_accept": _accept,
    "ttft_p50_s": _p50(lambda s: s.ttft),
    "itl_p50_s": _p50(lambda s: s.itl),
}


def tagged(expr: str, label: str, value: str) -> str:
    """`expr` with `label="value"` on every sample (an empty source label always matches)."""
    return f'label_replace({expr}, "{label}", "{value}", "", "")'


def engine_queries(engines: Sequence[Engine], matchers: Sequence[str], window: str) -> list[Query]:
    """One query per figure over every engine that describes its fleet series."""
    out = []
    for figure, build in FIGURES.items():
        parts = [
            tagged(f"({expr})", ENGINE_LABEL, e.name)
            for e in engines
            if e.fleet is not None and (expr := build(e.fleet, matchers, window)) is not None
        ]
        if parts:
            out.append(Query(figure, " or ".join(parts)))
    return out


def up_query(matchers: Sequence[str]) -> Query:
    return Query("up", selector("up", matchers))


def gpu_query(matchers: Sequence[str]) -> Query:
    """Every node's GPUs in one query: mean utilisation, memory and power summed."""
    parts = [
        ("util", f"avg by ({GPU_BY}) ({selector(GPU_UTIL, matchers)})"),
        ("fb_used", f"sum by ({GPU_BY}) ({selector(GPU_FB_USED, matchers)})"),
        ("fb_free", f"sum by ({GPU_BY}) ({selector(GPU_FB_FREE, matchers)})"),
        ("power", f"sum by ({GPU_BY}) ({selector(GPU_POWER, matchers)})"),
    ]
    return Query("gpu", " or ".join(tagged(expr, MEASURE_LABEL, m) for m, expr in parts))


def restarts_query(engines: Sequence[Engine], matchers: Sequence[str], window: str) -> Query:
    """The servers restarted within `window` more times than Prometheus saw them come up
    (a restart between two scrapes; one seen down changes `up` twice, 1 to 0 to 1):
    `start`, the new process's start time, where the target serves one; `reset`, where
    a generation token counter went back (an engine without the start time)."""
    names = "|".join(e.fleet.generation_tokens for e in engines if e.fleet is not None)
    tokens = "{" + ", ".join([f'__name__=~"{names}"', *matchers]) + "}"
    started = selector(PROCESS_START, matchers)
    seen = f"max by (instance, job) (ceil(changes({selector('up', matchers)}[{window}]) / 2))"
    parts = [
        (
            "start",
            f"max by (instance, job) ({started}) and on (instance, job) "
            f"(max by (instance, job) (changes({started}[{window}])) > on (instance, job) {seen})",
        ),
        (
            "reset",
            f"sum by (instance, job) (resets({tokens}[{window}])) > on (instance, job) {seen}",
        ),
    ]
    return Query("restarts", " or ".join(tagged(expr, MEASURE_LABEL, m) for m, expr in parts))
