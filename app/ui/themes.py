"""Register sgwatch's bundled themes with Textual; every built-in theme stays selectable."""

from __future__ import annotations

from textual.app import App
from textual.theme import Theme

from sgwatch.themes import load_themes

DEFAULT_THEME = "sgwatch-dark"


def register_themes(app: App) -> None:
    for spec in load_themes().values():
        app.register_theme(Theme(**spec))


def bundled_themes() -> list[str]:
    """sgwatch's own themes, by name (the palette offers each by name)."""
    return list(load_themes())
