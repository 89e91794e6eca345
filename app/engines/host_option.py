"""A flag catalog's option as JSON: the shape the live catalog programs print on the host
(engines/*/host_catalog.py) and scripts/gen_*_catalog.py write into the bundled
catalogs, so the two are read alike.

Stdlib only, Python >= 3.8, no `from __future__`: the host programs import it as
sgwatch would, and get its text in place of that import when sent (remote/hostprogram.py).
"""

import argparse
import json
import sys

# The fields after names, dest and kind, in the order written, each with the value at
# which it is left out.
FIELDS = (
    ("type", None),
    ("nargs", None),
    ("const", None),
    ("default", None),
    ("default_known", True),
    ("choices", None),
    ("required", False),
    ("deprecated", False),
    ("removed", False),
    ("replacement", None),
    ("field", None),
    ("resolvable", False),
    ("fallback", None),
    ("help", ""),
)


def jsonable(value):
    """(value, True) when JSON can hold it (a set as a sorted list), else (None, False)."""
    if isinstance(value, (set, frozenset)):
        value = sorted(value, key=str)
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return None, False
    return value, True


def option_json(names, dest, kind, **fields):
    """One option; a field at its default value is left out."""
    out = {"names": names, "dest": dest, "kind": kind}
    for key, empty in FIELDS:
        value = fields.get(key, empty)
        if value != empty:
            out[key] = value
    return out


def from_action(action, kind, const, names, type_=None, **fields):
    """An argparse action as one option: its dest, its nargs when it takes a value, and its
    default and choices as JSON holds them; `fields`: the rest, as option_json takes them."""
    default, known = jsonable(action.default)
    choices = None
    if action.choices is not None:
        listed = action.choices
        if isinstance(listed, (set, frozenset)):  # iteration order varies per process
            listed = sorted(listed, key=str)
        choices, ok = jsonable([c for c in listed if c is not None])
        choices = choices if ok else None
    return option_json(
        names,
        action.dest,
        kind,
        type=type_,
        nargs=action.nargs if kind in ("value", "choice") else None,
        const=jsonable(const)[0],
        default=default,
        default_known=known,
        choices=choices,
        **fields,
    )


def switch(action):
    """(kind, const, names) of an argparse switch (an option given without a value),
    else None; a `--X/--no-X` pair is listed under its `--X` names."""
    names = list(action.option_strings)
    if isinstance(action, argparse._StoreTrueAction):
        return "store_true", None, names
    if isinstance(action, argparse._StoreFalseAction):
        return "store_false", None, names
    if isinstance(action, argparse._StoreConstAction):
        return "store_const", action.const, names
    if type(action).__name__ == "BooleanOptionalAction":
        return "boolean_optional", None, [n for n in names if not n.startswith("--no-")]
    return None


def live(engine, version, options):
    """The catalog a host program prints."""
    return {
        "engine": engine,
        "version": version,
        "origin": "live",
        "python": sys.version.split()[0],
        "options": options,
    }
