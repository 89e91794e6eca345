"""Effective vs requested: where the server runs with something other than what was asked.

SGLang logs its arguments once, after resolution (the `server_args=` dump;
`/server_info` serves the same dict), so its automatic decisions show only as
values there (docs/design/log-formats.md): piecewise CUDA graphs switched off for a
multimodal model, an auto-chosen `mem_fraction_static`, a default attention
backend. Reading the dump against the launch command and the catalog's
defaults tells them apart:
  - "overridden": the command asked for a value and the server runs another;
  - "auto": the command left it alone and the server runs something other than
    the default (None defaults are "let the server decide", so every value it
    picks shows up here).
An Optional[bool] switch left unset counts as off: only the server turning it
on is news. Settings the dump lacks (a cut-short dump) are not guessed at.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from sgwatch.core.cmdline import MISSING, LaunchCommand
from sgwatch.engines.shapes.differences import Difference
from sgwatch.engines.shapes.flags import Catalog, FlagOption


def requested(cmd: LaunchCommand, catalog: Catalog) -> dict[str, Any]:
    """Setting -> the value the command asks for (Catalog.requested), with the model
    that `sglang serve MODEL` gives as its argument."""
    out = catalog.requested(cmd)
    if cmd.program[-1:] == ("serve",) and cmd.positional:
        out = {"model_path": cmd.positional[0], **out}
    return out


def differences(
    cmd: LaunchCommand | None, resolved: Mapping[str, Any], catalog: Catalog
) -> list[Difference]:
    """Every setting of the dump whose value is not what was requested or the default,
    in dump order. `cmd` None: nothing is known to be requested (a log read alone)."""
    asked = requested(cmd, catalog) if cmd is not None else {}
    out: list[Difference] = []
    for key, value in resolved.items():
        opt = catalog.get(key)
        if opt is None or opt.setting != key:
            continue  # not a command-line setting (or only a deprecated spelling of one)
        want = asked.get(key, MISSING)
        if want is not MISSING:
            if not same(value, want):
                out.append(_difference(opt, value, want, "overridden"))
        elif opt.auto:
            if value not in (None, False):
                out.append(_difference(opt, value, MISSING, "auto"))
        elif opt.default_known and not same(value, opt.start_value):
            out.append(_difference(opt, value, MISSING, "auto"))
    return out


def _difference(
    opt: FlagOption, value: Any, want: Any, reason: Literal["overridden", "auto"]
) -> Difference:
    return Difference(opt.setting, opt.name, value, want, opt.start_value, reason, opt.group)


def same(a: Any, b: Any) -> bool:
    """Equal as settings: 0.8 == 0.80, [1, 2] == (1, 2), None == "None" (nullable strings),
    "4096" == 4096 (a value typed with a parser the catalog cannot run)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, str) != isinstance(b, str):
        text, other = (a, b) if isinstance(a, str) else (b, a)
        if other is None:
            return text == "None"
        if isinstance(other, int | float):
            try:
                return same(float(text), other)
            except ValueError:
                return False
        return False
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b
