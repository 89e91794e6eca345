"""SGLang's own account of its start-up steps' lengths (docs/design/log-formats.md,
"Start-up timings"). Pure.

- Releases with the start-up latency timer print one line a step as it ends:
  `Startup timing: {name} took {x:.3f}s`, and `Setting startup metric: {name} took
  {x:.3f}s` for a figure set from outside the timer.
- 0.5.23 prints one summary once the engine is up: `Engine startup timings (s):
  load_weight=12.02, kv_cache_allocation=0.02, scheduler_e2e=52.09, cuda_graph={prefill=
  22.96, decode=12.26, ...}, tokenizer_e2e=65.82` (steps absent from a setup are left
  out; the graph roles are written `role=X` or `role: X`).
"""

from __future__ import annotations

import re

from sgwatch.core import events as ev

_ONE = re.compile(r"(?:Startup timing|Setting startup metric): (\S+) took (\d+(?:\.\d+)?) ?s")
_SUMMARY = "Engine startup timings (s): "
_ITEM = re.compile(r"(\w+)(?:=|: )(\d+(?:\.\d+)?)")
_PART = re.compile(r"(\w+)=\{([^}]*)\}|" + _ITEM.pattern)  # a group of steps, or one
STARTS = ("Startup timing: ", "Setting startup metric: ", _SUMMARY)
# Steps that each span the start-up up to their end (the others nest inside them):
# the longest is the whole start-up. Newer releases name it `e2e`.
WHOLE = ("e2e", "tokenizer_e2e", "scheduler_e2e")


def whole(steps: dict[str, float]) -> float | None:
    """The whole start-up by the server's clock, None if no step spans it."""
    found = [steps[k] for k in WHOLE if steps.get(k)]
    return max(found) if found else None


def startup_timing(msg: str, ts: str | None) -> ev.StartupTiming | None:
    """The steps a line times (`msg` starts with one of STARTS: the caller's test)."""
    if msg.startswith(_SUMMARY):
        body = msg[len(_SUMMARY) :]
        steps: dict[str, float] = {}
        for group, inner, name, value in _PART.findall(body):
            if group:
                steps.update((f"{group}.{k}", float(v)) for k, v in _ITEM.findall(inner))
            else:
                steps[name] = float(value)
        return ev.StartupTiming(ts, steps, whole(steps)) if steps else None
    m = _ONE.match(msg)
    return ev.StartupTiming(ts, {m[1]: float(m[2])}) if m else None
