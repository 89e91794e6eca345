"""Effective vs requested for vLLM: the settings the server changed, in its own words.

vLLM logs what was asked (`non-default args: {...}`) but no resolved dump; where
it changes a setting it says so in a warning (eager mode turns CUDA graphs off,
an unsupported cudagraph mode is lowered, capture sizes are capped). The parser
reads those into the run's settings under OVERRIDDEN (core/state.py); each is a
Difference with the warning as its `why`: "overridden" when the command or the
server names what was asked, else "auto".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from sgwatch.core.cmdline import MISSING, LaunchCommand, value_of
from sgwatch.core.events import CAPTURING_GRAPHS, COMPILING
from sgwatch.core.state import OVERRIDDEN
from sgwatch.engines.shapes.differences import Difference
from sgwatch.engines.shapes.flags import Catalog


def differences(
    cmd: LaunchCommand | None, resolved: Mapping[str, Any], catalog: Catalog
) -> list[Difference]:
    asked = catalog.requested(cmd) if cmd is not None else {}
    out = []
    for setting, (logged_request, why) in resolved.get(OVERRIDDEN, {}).items():
        opt = catalog.get(setting)
        want = asked.get(setting, MISSING)
        if want is MISSING and cmd is not None:  # a flag the catalog does not know, by its name
            want = value_of(cmd, "--" + setting.replace("_", "-"))
        if want is MISSING and logged_request is not None:
            want = logged_request
        out.append(
            Difference(
                setting,
                opt.name if opt is not None else "--" + setting.replace("_", "-"),
                resolved.get(setting),
                want,
                opt.start_value if opt is not None else None,
                "auto" if want is MISSING else "overridden",
                opt.group if opt is not None else "",
                why,
            )
        )
    return out


# What each setting vLLM changes on its own costs, in a few words (value -> effect).
_EFFECTS = {
    "cudagraph_mode": lambda v: "no CUDA graphs" if v == "NONE" else f"CUDA graphs {v} only",
    "optimization_level": lambda v: f"optimization level -O{v}",
    "compilation_mode": lambda _v: "no torch.compile",
    "max_cudagraph_capture_size": lambda v: f"CUDA graphs for batches up to {v} only",
    "disable_custom_all_reduce": lambda _v: "NCCL all-reduce instead of vLLM's custom one",
}


def speed_changes(
    resolved: Mapping[str, Any], cmd: LaunchCommand | None, _arch: str | None
) -> list[Difference]:
    """The overrides that cost speed, each with the server's warning as its why."""
    out = []
    for d in differences(cmd, resolved, Catalog(engine="vllm", options=())):
        if (effect := _EFFECTS.get(d.setting)) is not None:
            keep = _keeps_mode(d)
            out.append(
                replace(d, effect=effect(d.effective), affects_speed=True, override_flag=keep)
            )
    return out


def _keeps_mode(d: Difference) -> str | None:
    """What keeps a cudagraph mode that vLLM lowered because a backend cannot capture it
    (`CUDAGraphMode.FULL is not supported with <attention backend> ...; setting
    cudagraph_mode=PIECEWISE`): another attention backend (`--attention-backend`, the
    environment before the flag), or for the expert-parallel all-to-all another one."""
    if d.setting != "cudagraph_mode" or "is not supported with" not in d.why:
        return None
    if "expert-parallel backend" in d.why:
        return "--all2all-backend other than nccl_alltoall"
    asked = d.requested if isinstance(d.requested, str) else "the mode asked"
    return f"--attention-backend NAME (one that captures {asked}; VLLM_ATTENTION_BACKEND before)"


def ruled_out_phases(resolved: Mapping[str, Any]) -> frozenset[str]:
    """Warmup phases the settings leave out: eager mode compiles nothing and captures no
    CUDA graphs; `-O0` or compilation mode NONE compile nothing."""
    eager = resolved.get("enforce_eager") is True
    out = set()
    if eager or resolved.get("cudagraph_mode") == "NONE":
        out.add(CAPTURING_GRAPHS)
    if (
        eager
        or resolved.get("optimization_level") == 0
        or resolved.get("compilation_mode") == "NONE"
    ):
        out.add(COMPILING)
    return frozenset(out)
