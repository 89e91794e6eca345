"""The flag change that avoids a crash, where SGLang's own message names one.

A piecewise CUDA graph failure (`Piecewise CUDA Graph failed with error: ...`) is
followed by SGLang's advice: `To work around this error, add
--disable-piecewise-cuda-graph to your launch command.` in releases where piecewise
graphs are on by default, `disable Piecewise CUDA graph by unset
--enable-piecewise-cuda-graph` in those where they were opt-in. `--enforce-piecewise-
cuda-graph` beats `--disable-piecewise-cuda-graph` (0.5.x `_handle_piecewise_cuda_graph`
returns before any rule), so a run that was given it must drop it too. Releases
that replaced the switches with `--cuda-graph-backend-prefill` have no such remedy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sgwatch.core.events import Remedy

DISABLE = "--disable-piecewise-cuda-graph"
OPT_IN = "--enable-piecewise-cuda-graph"
_ENFORCE = "--enforce-piecewise-cuda-graph"


def advised(line: str) -> str | None:
    """The flag an advice line after the failure names: DISABLE (to add) or OPT_IN
    (to take out); None for any other line."""
    if DISABLE in line and "add" in line:
        return DISABLE
    if OPT_IN in line and "unset" in line:
        return OPT_IN
    return None


def piecewise(advice: str | None, resolved: Mapping[str, Any]) -> Remedy | None:
    """The remedy for a failed piecewise CUDA graph, given the flag SGLang's advice
    named (None: not read yet) and the run's resolved settings (empty: not logged)."""
    if "cuda_graph_backend_prefill" in resolved and "disable_piecewise_cuda_graph" not in resolved:
        return None  # no piecewise switches in this release
    enforced = resolved.get("enforce_piecewise_cuda_graph")
    # Unknown settings: drop it where the command has it, without saying so.
    drop = () if enforced is False else (_ENFORCE,)
    said = (_ENFORCE,) if enforced is True else ()
    opt_in = advice == OPT_IN or (
        advice is None
        and resolved.get("enable_piecewise_cuda_graph") is True
        and "disable_piecewise_cuda_graph" not in resolved
    )
    if opt_in:
        drop = (OPT_IN, *drop)
        return Remedy(_words((OPT_IN, *said), ()), (), drop)
    return Remedy(_words(said, (DISABLE,)), ((DISABLE,),), drop)


def _words(drop: tuple[str, ...], add: tuple[str, ...]) -> str:
    parts = [f"drop {' '.join(drop)}"] if drop else []
    parts += [f"add {' '.join(add)}"] if add else []
    return ", ".join(parts)
