"""Textual's compositor arrangement without its reference cycle.

Each layout of the screen (a resize, the layout key, a widget shown or hidden, a search
opened) builds a map of every widget's place: a dict of `MapGeometry` tuples, about 150
entries here. Textual fills it from a recursive inner function, which holds itself
through its closure: a cycle that also holds the map and the set of widgets it filled.
So every arrangement left its map, then (once the map was handed out as a copy) its
closure, about 1.3 KiB, for a full collection: a few thousand an hour in the soak, piling
up between Python's full passes, and such peaks are what Python's arenas keep for good
(docs/design/memory.md; measured in docs/RELIABILITY.md).

`free_promptly()` installs the same function, compiled from Textual's own source with one
line added before it returns: the inner function's name is cleared, which undoes the
cycle, so the closure, the map and the set go as soon as nothing uses them. Only for the
Textual it was checked against, whose source ends the function with the line looked for;
another is left as it is, and tests/ui/test_maps.py says so.
"""

from __future__ import annotations
import __future__

import inspect
import textwrap
from collections.abc import Callable

from textual import _compositor
from textual._compositor import Compositor

from sgwatch.ui.patching import install

TEXTUALS = Compositor._arrange_root
RETURN = "        return map, widgets\n"
UNDONE = "        add_widget = None  # the inner function held itself through its closure\n"


def _rebuilt() -> Callable | None:
    """Textual's `_arrange_root` with the cycle undone before it returns, or None if its
    source is not the one known."""
    try:
        lines, first = inspect.getsourcelines(TEXTUALS)
    except (OSError, TypeError):
        return None
    source = "".join(lines)
    if source.count(RETURN) != 1:
        return None
    source = "\n" * (first - 1) + textwrap.dedent(source.replace(RETURN, UNDONE + RETURN))
    flags = __future__.annotations.compiler_flag
    code = compile(source, _compositor.__file__, "exec", flags=flags, dont_inherit=True)
    defined: dict[str, object] = {}
    exec(code, vars(_compositor), defined)  # Textual's names, as its own module sees them
    return defined["_arrange_root"]  # type: ignore[return-value]


_arrange_root = _rebuilt()


def free_promptly() -> bool:
    """Arrangements from now on leave nothing for the collector; whether this Textual's
    compositor is the one known (else nothing changes)."""
    return _arrange_root is not None and install(Compositor, "_arrange_root", _arrange_root)
