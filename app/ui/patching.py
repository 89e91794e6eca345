"""Textual's own code replaced in place, only in the Textual it was read against.

The dashboard undoes a few reference cycles and caches of Textual's that a long-lived
app pays for (ui/strips.py, ui/maps.py, ui/rings.py, ui/components.py, ui/removed.py;
why: docs/design/memory.md). Each replacement relies on how the pinned version's code
works, so another version is left as it is, and each module's test fails there until it
is read again and pinned.
"""

from __future__ import annotations

import textual

CHECKED = "8.2.8"  # the version in constraints.txt


def install(owner: object, name: str, ours: object) -> bool:
    """`owner.name` is `ours` from now on; whether this Textual is the one checked (else
    nothing changes)."""
    if getattr(owner, name) is ours:
        return True
    if textual.__version__ != CHECKED:
        return False
    setattr(owner, name, ours)
    return True
