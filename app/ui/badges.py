"""State badges: a symbol and a word for every state, so colour is never the only cue."""

from __future__ import annotations

BADGES = {
    "starting": ("◌", "STARTING", "pending"),
    "loading_weights": ("⇣", "LOADING", "busy"),
    "allocating_kv_cache": ("▦", "KV CACHE", "busy"),
    "capturing_graphs": ("◆", "CAPTURING", "busy"),
    "compiling": ("⚙", "COMPILING", "busy"),
    "warming_up": ("…", "WARMING UP", "busy"),
    "ready": ("✓", "READY", "good"),
    "serving": ("▶", "SERVING", "good"),
    "crashed": ("✗", "CRASHED", "bad"),
    "stopped": ("■", "STOPPED", "pending"),
}

PHASE_LABELS = {
    "starting": "Start-up",
    "loading_weights": "Weights",
    "allocating_kv_cache": "KV cache",
    "capturing_graphs": "CUDA graphs",
    "compiling": "Compile",
    "warming_up": "Warm-up",
}


def badge(state: str, link: str) -> tuple[str, str]:
    """(text, css class) for the header's state badge."""
    if link.startswith("stale"):
        return "⟳ RECONNECTING (stale)", "pending"
    if link == "failed" and state == "starting":  # nothing to watch: the note says why
        return "⚠ NOT WATCHING", "bad"
    symbol, word, kind = BADGES.get(state, ("?", state.upper(), "pending"))
    return f"{symbol} {word}", kind


def duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    return f"{minutes // 60}h{minutes % 60:02d}m"
