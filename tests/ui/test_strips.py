"""Rendered lines without Textual's per-strip caches: the same lines, a fraction of the
memory held (ui/strips.py)."""

import gc
import json
import subprocess
import sys
from pathlib import Path

from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import Monochrome
from textual.strip import Strip

from sgwatch.ui import strips

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = """
import json, sys, tracemalloc
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from sgwatch.ui import strips

if sys.argv[1] == "light":
    assert strips.lighten()
tracemalloc.start()
lines = []
for i in range(1000):  # a frame's lines, each asked for twice as frames ask for them
    strip = Strip([Segment(f"line {i} ", Style(bold=True)), Segment("x" * (i % 90))])
    for _ in range(2):
        shown = strip.crop_extend(2, 60, None).apply_offsets(2, i)
        halves = strip.divide([30, 60])
        whole = strip.divide([strip.cell_length])
        styled = strip.apply_style(Style(color="red")).crop(0, 40)
    lines.append((strip, shown, halves + whole, styled))
held = tracemalloc.get_traced_memory()[0]
text = [[s.text, [h.text for h in d], t.text, t.cell_length] for _, s, d, t in lines]
print(json.dumps({"held": held, "text": text}))
"""


def run(mode: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM, mode],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout)


def test_strips_without_caches_hold_the_same_lines_in_less_than_half_the_memory():
    plain, light = run("plain"), run("light")
    assert light["text"] == plain["text"]
    assert light["held"] < plain["held"] / 2, (light["held"], plain["held"])


def test_the_pinned_textual_is_the_one_checked():
    # A Textual whose Strip changed is left with its caches: check it again, then pin it.
    assert strips.lighten()


def test_a_strip_divided_or_filtered_again_reuses_what_it_derived():
    # Every frame divides and filters the strips widgets keep: an idle dashboard's CPU.
    # Two sets of cuts may alternate from frame to frame (a third of the reuses counted).
    assert strips.lighten()
    strip = Strip([Segment("warming up ", Style(bold=True)), Segment("x" * 40, Style(color="red"))])
    assert strip.divide([10, 30]) is strip.divide([10, 30])
    halves, thirds = strip.divide([25, 51]), strip.divide([17, 34, 51])
    assert strip.divide([25, 51]) is halves and strip.divide([17, 34, 51]) is thirds
    dim = Monochrome()
    assert strip.apply_filter(dim, Color(0, 0, 0)) is strip.apply_filter(dim, Color(0, 0, 0))


def cyclic_strips(divide) -> int:
    """Strips of a frame cut whole and dropped that only a full collection frees."""
    strips.lighten()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for i in range(500):
            strip = Strip([Segment(f"line {i} ", Style(bold=True)), Segment("x" * (i % 90))])
            assert [s.text for s in divide(strip, [strip.cell_length])] == [strip.text]
            del strip
        gc.collect()
        return sum(isinstance(o, Strip) for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_a_strip_cut_whole_goes_when_dropped_not_at_a_full_collection():
    assert cyclic_strips(strips.TEXTUALS_DIVIDE) == 500  # Textual's: a cycle each
    assert cyclic_strips(Strip.divide) == 0
