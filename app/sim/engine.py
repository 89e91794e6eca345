"""The simulator as an engine: SGLang's log, flags and /metrics, its own command.

`python -m sgwatch.sim` / `sgwatch sim` takes SGLang's flags plus its own
`--sim-*` ones and writes the log of the SGLang release `--sim-format` names,
so it reuses SGLang's parser, catalogs and metric names. What differs is how
it is recognised, which release it is (the command says, not an installed
package), that the host has no SGLang to list its flags, and that preflight
asks the simulator's own parser.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sgwatch.core.cmdline import LaunchCommand, value_of
from sgwatch.engines.base import ProcessPattern
from sgwatch.engines.sglang import ENGINE as SGLANG
from sgwatch.engines.sglang import parser_args
from sgwatch.engines.sglang.flags import Catalog, Problem
from sgwatch.sim.args import DEFAULT_FORMAT, parse

PROCESSES = (
    ProcessPattern("sim", module="sgwatch.sim"),
    ProcessPattern("sim", launcher=("sgwatch", "sim")),
)
_OWN = "--sim-"


def command_version(cmd: LaunchCommand) -> str:
    """The SGLang release whose log and flags the command imitates."""
    fmt = value_of(cmd, "--sim-format")
    return fmt if isinstance(fmt, str) else DEFAULT_FORMAT


def check(catalog: Catalog, cmd: LaunchCommand) -> list[Problem]:
    """SGLang's verdict on everything but the simulator's own `--sim-*` flags."""
    sglang_part = dataclasses.replace(
        cmd, flags=tuple(f for f in cmd.flags if not f.name.startswith(_OWN))
    )
    return SGLANG.check(catalog, sglang_part)


def startup_error(args: list[str]) -> str | None:
    """What the simulator refuses at startup (argparse errors exit, as SGLang's do).

    Run on the host by app/remote/host_preflight.py."""
    return parse(args).invalid


def _preflight_request(cmd: LaunchCommand) -> dict[str, Any]:
    return {
        "entry": f"{__name__}:startup_error",
        "builds_parser": False,
        "prog": None,
        "args": parser_args(cmd),
        "checked_by": "the simulator's parser",
    }


ENGINE = dataclasses.replace(
    SGLANG,
    name="sim",
    processes=PROCESSES,
    version_package=None,
    catalog_program=None,
    command_version=command_version,
    check=check,
    preflight_request=_preflight_request,
)
