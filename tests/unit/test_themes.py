"""Bundled themes load and carry what Textual's Theme needs, in valid colours."""

import re

from sgwatch.themes import load_themes

HEX = re.compile(r"#[0-9A-Fa-f]{6}")
COLOURS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "success",
    "warning",
    "error",
)


def luminance(hex_colour: str) -> float:
    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_dark_and_light_themes_load_with_valid_colours():
    themes = load_themes()
    assert {"sgwatch-dark", "sgwatch-light"} <= themes.keys()
    assert themes["sgwatch-dark"]["dark"] is True and themes["sgwatch-light"]["dark"] is False
    for spec in themes.values():
        for key in COLOURS:
            assert HEX.fullmatch(spec[key]), (spec["name"], key)


def test_text_and_status_colours_are_readable_on_the_background():
    for spec in load_themes().values():
        assert contrast(spec["foreground"], spec["background"]) >= 7, spec["name"]
        for status in ("success", "warning", "error"):
            assert contrast(spec[status], spec["background"]) >= 3, (spec["name"], status)
