"""A style's meta, which Textual puts on every segment it renders (the cell offset text
selection reads), is kept in a block of its own size from Python's allocator, not in
the C heap where pickle's 4 KiB buffer was cut down to it (ui/pickles.py; why:
docs/design/memory.md)."""

import pickle

import rich.style
import textual.style

from sgwatch.ui import pickles


def in_c_heap(obj: object) -> bool:
    with open("/proc/self/maps") as maps:
        for line in maps:
            if line.rstrip().endswith("[heap]"):
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                return lo <= id(obj) < hi
    raise AssertionError("no [heap] mapping")


def test_a_rendered_segments_meta_is_kept_out_of_the_c_heap():
    assert in_c_heap(pickle.dumps({"offset": (3, 4)}))  # what pickle alone leaves
    pickles.copy_out()
    rendered = textual.style.Style(bold=True).rich_style_with_offset(3, 4)
    link = rich.style.Style.from_meta({"@click": "app.bell()"})
    assert rendered.meta == {"offset": (3, 4)} and link.meta == {"@click": "app.bell()"}
    assert not in_c_heap(rendered._meta) and not in_c_heap(link._meta)
