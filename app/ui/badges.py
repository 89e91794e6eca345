"""The header's state badge (the link's state first); the phases' names come from core."""

from __future__ import annotations

from sgwatch.core.display import PHASE_LABELS  # noqa: F401 (the screens read it from here)
from sgwatch.core.display import badge as state_badge
from sgwatch.live.linkstate import Link, LinkState


def badge(state: str, link: LinkState) -> tuple[str, str]:
    """(text, css class) for the header's state badge."""
    if link.kind is Link.STALE:
        return "⟳ RECONNECTING (stale)", "pending"
    if link.kind is Link.FAILED and state == "starting":  # nothing to watch: the note says why
        return "⚠ NOT WATCHING", "bad"
    shown = state_badge(state)
    return str(shown), shown.tone
