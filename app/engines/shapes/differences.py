"""Effective vs requested: one setting the server runs with other than what was asked.

The common shape of every engine's `differences` and `speed_changes`: "overridden"
when the command asked for a value and the server runs another, "auto" when the
command left it alone and the server chose something other than the default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class Difference:
    setting: str  # the resolved setting's key: "disable_piecewise_cuda_graph"
    option: str  # the flag that sets it: "--disable-piecewise-cuda-graph"
    effective: Any  # what the server runs with
    requested: Any  # what the command asked for; MISSING when it did not
    default: Any  # the catalog's default (its fallback for None)
    reason: Literal["overridden", "auto"]
    group: str  # the panel group of the option
    why: str = ""  # the server's own words, when its log gives them
    # Where the change costs speed (an engine's speed_changes): what it means, in a few
    # words, and the flag (or setting) that keeps the server from making it.
    effect: str = ""
    override_flag: str | None = None
    affects_speed: bool = False
