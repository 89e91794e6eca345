"""Effective vs requested for vLLM: the settings the server changed, in its own words.

vLLM logs what was asked (`non-default args: {...}`) but no resolved dump; where
it changes a setting it says so in a warning (eager mode turns CUDA graphs off,
an unsupported cudagraph mode is lowered, capture sizes are capped). The parser
reads those into the run's settings under OVERRIDDEN (core/state.py); each is a
Difference with the warning as its `why`: "overridden" when the command or the
server names what was asked, else "auto".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sgwatch.core.cmdline import MISSING, LaunchCommand, value_of
from sgwatch.core.state import OVERRIDDEN
from sgwatch.engines.sglang.effective import Difference, requested
from sgwatch.engines.sglang.flags import Catalog


def differences(
    cmd: LaunchCommand | None, resolved: Mapping[str, Any], catalog: Catalog
) -> list[Difference]:
    asked = requested(cmd, catalog) if cmd is not None else {}
    out = []
    for setting, (logged_request, why) in resolved.get(OVERRIDDEN, {}).items():
        opt = catalog.get(setting)
        want = asked.get(setting, MISSING)
        if want is MISSING and cmd is not None:  # a flag the catalog does not know, by its name
            want = value_of(cmd, "--" + setting.replace("_", "-"))
        if want is MISSING and logged_request is not None:
            want = logged_request
        out.append(
            Difference(
                setting,
                opt.name if opt is not None else "--" + setting.replace("_", "-"),
                resolved.get(setting),
                want,
                opt.start_value if opt is not None else None,
                "auto" if want is MISSING else "overridden",
                opt.group if opt is not None else "",
                why,
            )
        )
    return out
