"""SGLang: log parser, flag catalogs, effective settings, /metrics and process patterns.

ENGINE is what the rest of sgwatch sees of it (engines/base.py); the registry
in engines/__init__.py lists it.
"""

from __future__ import annotations

from typing import Any

from sgwatch.core.cmdline import LaunchCommand
from sgwatch.engines.base import Engine, ProcessPattern
from sgwatch.engines.sglang import detect
from sgwatch.engines.sglang.catalog import bundled, select
from sgwatch.engines.sglang.effective import differences
from sgwatch.engines.sglang.fleet import SERIES as FLEET_SERIES
from sgwatch.engines.sglang.identity import model_of
from sgwatch.engines.sglang.metrics import read_metrics
from sgwatch.engines.sglang.nodes import node_of
from sgwatch.engines.sglang.parse import Parser
from sgwatch.engines.sglang.prefix import split_prefix
from sgwatch.engines.sglang.speed import ruled_out_phases, speed_changes
from sgwatch.engines.sglang.startup_report import from_metrics, from_server_info
from sgwatch.engines.shapes.flags import Catalog, Problem
from sgwatch.engines.shapes.metrics import between

PROCESSES = (
    ProcessPattern("launch_server", module="sglang.launch_server"),
    ProcessPattern("launch_server", script="sglang/launch_server.py"),
    ProcessPattern("serve", launcher=("sglang", "serve")),
)


def parser_args(cmd: LaunchCommand) -> list[str]:
    """The arguments the server's parser sees (`sglang serve MODEL`: MODEL is --model-path)."""
    flags = [t for f in cmd.flags for t in f.tokens]
    if cmd.program[-1:] == ("serve",) and cmd.positional:
        return ["--model-path", cmd.positional[0], *cmd.positional[1:], *flags]
    return [*cmd.positional, *flags]


def check(catalog: Catalog, cmd: LaunchCommand) -> list[Problem]:
    """The catalog's verdict; an unknown flag names the bundled releases that accept it."""
    others = [c for c in bundled() if c.version != catalog.version]
    return catalog.check(cmd, others, positional="model_path")  # `sglang serve MODEL`


def _preflight_request(cmd: LaunchCommand) -> dict[str, Any]:
    return {
        "entry": "sglang.srt.server_args:ServerArgs.add_cli_args",
        "builds_parser": True,
        "prog": "sglang",
        "args": parser_args(cmd),
        "checked_by": "the host's SGLang parser",
    }


ENGINE = Engine(
    name="sglang",
    processes=PROCESSES,
    version_package="sglang",
    default_port=lambda _cmd: 30000,
    parser=Parser,
    split_prefix=split_prefix,
    markers=detect.MARKERS,
    catalog_program=f"{__name__}.host_catalog",
    select_catalog=select,
    check=check,
    preflight_request=_preflight_request,
    differences=differences,
    read_metrics=read_metrics,
    metrics_between=between,
    speed_changes=speed_changes,
    ruled_out_phases=ruled_out_phases,
    metrics_served=lambda resolved: bool(resolved.get("enable_metrics")),
    startup_from_metrics=from_metrics,
    startup_from_info=from_server_info,
    node_of=node_of,
    model_of=model_of,
    fleet=FLEET_SERIES,
)
