"""A server's own words that it changed a setting, read through a table: one row a
warning shape, the first that matches gives the Overridden event (core/events.py).

A row is (pattern, setting, effective[, requested]): `effective` is the value the
server runs with, or the number of the pattern's group that holds it; `requested`
the group holding what was asked for, left out (or None) when the line does not say.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sgwatch.core import events as ev

Row = (
    tuple[re.Pattern[str] | str, str, object]
    | tuple[re.Pattern[str] | str, str, object, int | None]
)


def said(table: Sequence[Row], message: str, ts: str | None) -> ev.Overridden | None:
    """The event for the first row that `message` matches, else None."""
    for pattern, setting, effective, *requested_in in table:
        m = re.search(pattern, message)
        if m is None:
            continue
        requested = requested_in[0] if requested_in else None
        value = _value(m[effective]) if _is_group(effective) else effective
        asked = _value(m[requested]) if requested is not None else None
        return ev.Overridden(ts, setting, value, asked, message.strip())
    return None


def _is_group(effective: object) -> bool:
    return isinstance(effective, int) and not isinstance(effective, bool)


def _value(text: str) -> object:
    """A logged value as the server holds it: a quoted string, a number, else the text."""
    text = text.strip()
    if len(text) > 1 and text[0] == text[-1] == "'":
        return text[1:-1]
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            pass
    return text
