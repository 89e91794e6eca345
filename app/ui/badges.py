"""The header's state badge (the link's state first) and the warmup phases' names on screen."""

from __future__ import annotations

from sgwatch.core.display import badge as state_badge
from sgwatch.live.linkstate import Link, LinkState

PHASE_LABELS = {
    "starting": "Start-up",
    "loading_weights": "Weights",
    "allocating_kv_cache": "KV cache",
    "capturing_graphs": "CUDA graphs",
    "compiling": "Compile",
    "warming_up": "Warm-up",
}


def badge(state: str, link: LinkState) -> tuple[str, str]:
    """(text, css class) for the header's state badge."""
    if link.kind is Link.STALE:
        return "⟳ RECONNECTING (stale)", "pending"
    if link.kind is Link.FAILED and state == "starting":  # nothing to watch: the note says why
        return "⚠ NOT WATCHING", "bad"
    shown = state_badge(state)
    return str(shown), shown.tone
