"""What the flag panel shows and does, without the screen: rows, toggles, edits, the diff.

A row is one option of the catalog with its value in the pending command (the
one being edited), in the running command, its default, and what the server
actually runs with when that differs (effective.py). Edits go through
core.launch with the catalog as resolver, so aliases and abbreviations edit
the flag they stand for and every other token stays where it was.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from sgwatch.core.cmdline import (
    MISSING,
    Change,
    LaunchCommand,
    LaunchError,
    diff,
    disable,
    enable,
    masked,
    set_value,
    unset,
    value_of,
)
from sgwatch.core.events import Remedy
from sgwatch.engines import Catalog, Difference, FlagOption


@dataclass(frozen=True, slots=True)
class Row:
    option: FlagOption
    value: str  # in the pending command; "" when it does not mention the flag
    running: str  # in the running command
    default: str
    effective: str | None  # what the server runs with, when not what was asked or default
    reason: str | None  # "overridden" or "auto", with `effective`

    @property
    def changed(self) -> bool:
        return self.value != self.running


def show(value: Any) -> str:
    if value is MISSING:
        return ""
    if value is True:
        return "on"
    if value is False:
        return "off"
    if value is None:
        return "None"
    if isinstance(value, list | tuple):
        return " ".join(show(v) for v in value)
    return str(value)


def rows(
    catalog: Catalog,
    running: LaunchCommand,
    pending: LaunchCommand,
    effective: list[Difference],
    query: str = "",
) -> dict[str, list[Row]]:
    """Rows per panel group (groups without a match left out); `query` matches names,
    help and group, case-insensitively; a flag set or changed always sorts first."""
    words = query.lower().split()
    by_setting = {d.setting: d for d in effective}
    out: dict[str, list[Row]] = {}
    for group, options in catalog.by_group().items():
        found = []
        for opt in options:
            if opt.removed:
                continue  # it only exists to refuse the launch
            text = f"{' '.join(opt.option_strings)} {opt.help} {group}".lower()
            if words and not all(w in text for w in words):
                continue
            d = by_setting.get(opt.setting)
            found.append(
                Row(
                    option=opt,
                    value=show(value_of(pending, opt.name, catalog.ref)),
                    running=show(value_of(running, opt.name, catalog.ref)),
                    default=show(opt.start_value) if opt.default_known else "(computed)",
                    effective=None if d is None else show(d.effective),
                    reason=None if d is None else d.reason,
                )
            )
        found.sort(key=lambda r: not (r.value or r.running))
        if found:
            out[group] = found
    return out


def is_on(cmd: LaunchCommand, opt: FlagOption, catalog: Catalog) -> bool:
    """Whether a switch is on: a BooleanOptional flag by its value (its default when the
    command is silent), store_true / store_false / store_const by being written."""
    current = value_of(cmd, opt.name, catalog.ref)
    if opt.kind == "boolean_optional":
        return bool(opt.start_value) if current is MISSING else current is True
    return current is not MISSING


def toggle(cmd: LaunchCommand, opt: FlagOption, catalog: Catalog) -> LaunchCommand:
    """A switch on when off, off when on."""
    if opt.takes_value:
        raise LaunchError(f"{opt.name} takes a value: edit it")
    if not is_on(cmd, opt, catalog):
        return enable(cmd, opt.name, catalog.ref)
    if opt.kind == "boolean_optional":
        return disable(cmd, opt.name, catalog.ref)
    return unset(cmd, opt.name, catalog.ref)


def edit(cmd: LaunchCommand, opt: FlagOption, text: str, catalog: Catalog) -> LaunchCommand:
    """Set a value as typed (several values: shell words); empty removes the flag.
    LaunchError says what argparse would refuse: a bad number, not a choice, a count."""
    if not opt.takes_value:
        raise LaunchError(f"{opt.name} is a switch: toggle it")
    if not text.strip():
        return unset(cmd, opt.name, catalog.ref)
    many = opt.nargs in ("+", "*") or isinstance(opt.nargs, int)
    try:
        values = shlex.split(text) if many else [text]
    except ValueError as e:
        raise LaunchError(f"{opt.name}: {e}") from None
    if why := opt.arity_problem(len(values)):
        raise LaunchError(f"{opt.name} {why}")
    try:
        opt.typed(values)
    except ValueError as e:
        raise LaunchError(f"{opt.name}: {e}") from None
    return set_value(cmd, opt.name, values, catalog.ref)


def remove(cmd: LaunchCommand, opt: FlagOption, catalog: Catalog) -> LaunchCommand:
    return unset(cmd, opt.name, catalog.ref)


def apply_remedy(cmd: LaunchCommand, remedy: Remedy, catalog: Catalog) -> LaunchCommand:
    """The command with a crash's remedy applied: its flags to drop taken out where the
    command has them, its flags to add put in (a switch turned on, a value set)."""
    for flag in remedy.drop:
        if value_of(cmd, flag, catalog.ref) is not MISSING:
            cmd = unset(cmd, flag, catalog.ref)
    for flag, *values in remedy.add:
        cmd = (
            set_value(cmd, flag, values, catalog.ref) if values else enable(cmd, flag, catalog.ref)
        )
    return cmd


def describe_changes(old: LaunchCommand, new: LaunchCommand, catalog: Catalog) -> list[str]:
    """The pending diff, a line per setting, secret values masked."""
    return [_line(c) for c in diff(masked(old), masked(new), catalog.ref)]


def _line(c: Change) -> str:
    if c.kind == "added":
        return f"+ {shlex.join(c.after or ())}"
    if c.kind == "removed":
        return f"- {shlex.join(c.before or ())}"
    return f"~ {shlex.join(c.before or ())}  →  {shlex.join(c.after or ())}"
