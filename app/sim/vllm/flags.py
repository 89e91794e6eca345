"""Which vLLM flags the simulated `vllm serve` accepts without modelling them.

The bundled vLLM catalog (engines/vllm/catalog/, generated from vLLM's source)
is the list: a flag vLLM has is accepted and shown in `non-default args`, any
other is refused as vLLM's argparse refuses it.
"""

from __future__ import annotations

import functools

from sgwatch.engines.vllm.catalog import nearest_bundled

VERSION = "0.11.0"  # the V1 release whose flags and log lines the simulator imitates


@functools.cache
def _spellings() -> dict[str, bool]:
    """Every spelling (`--x`, `--no-x` for booleans, aliases) -> whether it takes a value."""
    out: dict[str, bool] = {}
    for opt in nearest_bundled(VERSION).options:
        takes = opt.kind in ("value", "choice")
        for name in opt.names:
            out[name] = takes
            if opt.kind == "boolean_optional" and name.startswith("--"):
                out["--no-" + name[2:]] = False
    return out


def known(name: str) -> bool | None:
    """None: vLLM has no such flag; else whether it takes a value."""
    return _spellings().get(name)
