"""SGLang's start-up figures from its HTTP API, once it is up (docs/design/log-formats.md,
"Start-up timings"). Pure.

- `/metrics` (`--enable-metrics`): `sglang:startup_time_seconds{phase}` for the steps
  (`load_weight`, `kv_cache_allocation`, `scheduler_e2e`, `tokenizer_e2e`; newer
  releases `e2e`) and `sglang:startup_cuda_graph_time_seconds{phase}` per graph role.
- `/server_info`: `startup_time`, the same figures as one dict, the graphs nested under
  `cuda_graph`; null before the engine is up, and absent in releases without them.

Steps nest (the end-to-end ones hold the others), so the whole start-up is the longest
end-to-end step, never a sum. Steps are kept by the log's names (`cuda_graph.decode`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sgwatch.core import events as ev
from sgwatch.engines.prometheus import parse_exposition
from sgwatch.engines.sglang.timings import whole

_STEPS = "sglang:startup_time_seconds"
_GRAPHS = "sglang:startup_cuda_graph_time_seconds"


def from_metrics(text: str) -> ev.ServerStartup | None:
    """The figures on a `/metrics` page (raises MetricsError), None if it has none.
    Each rank's series of a step: the slowest is the start-up's."""
    steps: dict[str, float] = {}
    for s in parse_exposition(text):
        if s.name in (_STEPS, _GRAPHS) and (phase := s.labels.get("phase")):
            name = phase if s.name == _STEPS else f"cuda_graph.{phase}"
            steps[name] = max(steps.get(name, 0.0), s.value)
    return _report(steps, "/metrics")


def from_server_info(info: Mapping[str, Any]) -> ev.ServerStartup | None:
    """The figures in a `/server_info` answer, None if it has none (yet)."""
    found = info.get("startup_time")
    if not isinstance(found, Mapping):  # null until ready; not a dict in other builds
        return None
    steps: dict[str, float] = {}
    for name, value in found.items():
        if isinstance(value, Mapping):
            steps.update((f"{name}.{k}", float(v)) for k, v in value.items() if _number(v))
        elif _number(value):
            steps[str(name)] = float(value)
    return _report(steps, "/server_info")


def _report(steps: dict[str, float], source: str) -> ev.ServerStartup | None:
    if not steps:
        return None
    return ev.ServerStartup(whole(steps), source, steps)


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)
