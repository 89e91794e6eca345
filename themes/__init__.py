"""sgwatch's own colour themes, as TOML files beside this module.

Each file holds the fields of a Textual `Theme` (name, dark, the base colours,
optional `variables`); the dashboard registers them with Textual's theme API.
Reading them needs no UI library.
"""

from __future__ import annotations

import tomllib
from importlib.resources import files
from typing import Any


def load_themes() -> dict[str, dict[str, Any]]:
    """Every bundled theme, by name."""
    themes = {}
    for entry in sorted(files(__name__).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            spec = tomllib.loads(entry.read_text(encoding="utf-8"))
            themes[spec["name"]] = spec
    return themes
