"""The simulator as an engine: SGLang's or vLLM's log, flags and /metrics, its own command.

`python -m sgwatch.sim` / `sgwatch sim` takes SGLang's flags plus its own
`--sim-*` ones and writes the log of the SGLang release `--sim-format` names,
so it reuses SGLang's parser, catalogs and metric names. `python -m sgwatch.sim
vllm serve MODEL ...` is the simulated vLLM: the command says which engine it
imitates (`_imitation`, the one place that asks), and this adapter answers with
that engine's catalog, checks, metrics and port (the log's engine is recognised
from its lines, as for any server). What differs from the real engines is how it
is recognised, which release it is (the command says, not an installed package),
that the host has no SGLang or vLLM to list its flags, and that preflight asks the
simulator's own parser.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from sgwatch.core.cmdline import LaunchCommand, value_of
from sgwatch.engines.base import Engine, ProcessPattern
from sgwatch.engines.sglang import ENGINE as SGLANG
from sgwatch.engines.sglang import parser_args
from sgwatch.engines.shapes import (
    Catalog,
    Difference,
    MetricsPage,
    MetricsWindow,
    Problem,
    Selection,
)
from sgwatch.engines.vllm import ENGINE as VLLM
from sgwatch.sim.sglang.args import DEFAULT_FORMAT, parse
from sgwatch.sim.vllm import args as vllm_args
from sgwatch.sim.vllm import flags as vllm_flags

PROCESSES = (
    ProcessPattern("sim", module="sgwatch.sim"),
    ProcessPattern("sim", launcher=("sgwatch", "sim")),
)
_OWN = "--sim-"
_VLLM_SERVE = ("vllm", "serve")
_VLLM_RELEASE = f"vllm {vllm_flags.VERSION}"  # command_version of a simulated vLLM


@dataclasses.dataclass(frozen=True, slots=True)
class _Imitation:
    """What a simulated command imitates, read once from the command."""

    engine: Engine  # whose catalog, checks, differences and port answer for it
    view: LaunchCommand  # the command as that engine would be given it
    release: str  # the release whose log and flags it imitates
    startup_error: str  # this module's function that runs its parser on the host
    args: list[str]  # what that parser is given
    parser: str  # for the preflight's "checked by"


def _imitation(cmd: LaunchCommand) -> _Imitation:
    own = dataclasses.replace(cmd, flags=tuple(f for f in cmd.flags if not f.name.startswith(_OWN)))
    if cmd.positional[:2] == _VLLM_SERVE:
        return _Imitation(
            VLLM,
            dataclasses.replace(own, program=_VLLM_SERVE, positional=cmd.positional[2:]),
            _VLLM_RELEASE,
            "vllm_startup_error",
            [*cmd.positional[2:], *(t for f in cmd.flags for t in f.tokens)],
            "the simulator's vLLM parser",
        )
    fmt = value_of(cmd, "--sim-format")
    return _Imitation(
        SGLANG,
        own,
        fmt if isinstance(fmt, str) else DEFAULT_FORMAT,
        "startup_error",
        parser_args(cmd),
        "the simulator's parser",
    )


def command_version(cmd: LaunchCommand) -> str:
    """The release whose log and flags the command imitates."""
    return _imitation(cmd).release


def select_catalog(live_output: str | None, version: str | None) -> Selection:
    if version == _VLLM_RELEASE:
        return VLLM.select_catalog(None, vllm_flags.VERSION)
    return SGLANG.select_catalog(live_output, version)


def check(catalog: Catalog, cmd: LaunchCommand) -> list[Problem]:
    """The imitated engine's verdict on everything but the simulator's own `--sim-*` flags."""
    imitation = _imitation(cmd)
    return imitation.engine.check(catalog, imitation.view)


def startup_error(args: list[str]) -> str | None:
    """What the simulator refuses at startup (argparse errors exit, as SGLang's do).

    Run on the host by app/remote/host/preflight.py."""
    return parse(args).invalid


def vllm_startup_error(args: list[str]) -> str | None:
    """The simulated `vllm serve`'s parser on `args` (argparse exits on a bad flag)."""
    vllm_args.parse(args)
    return None


def _preflight_request(cmd: LaunchCommand) -> dict[str, Any]:
    imitation = _imitation(cmd)
    return {
        "entry": f"{__name__}:{imitation.startup_error}",
        "builds_parser": False,
        "prog": None,
        "args": imitation.args,
        "checked_by": imitation.parser,
    }


def differences(
    cmd: LaunchCommand, resolved: Mapping[str, Any], catalog: Catalog
) -> list[Difference]:
    imitation = _imitation(cmd)
    return imitation.engine.differences(imitation.view, resolved, catalog)


def read_metrics(text: str) -> MetricsPage:
    """The page of whichever engine the server imitates, by its metric names."""
    return (VLLM if "\nvllm:" in text else SGLANG).read_metrics(text)


def metrics_between(earlier: MetricsPage, later: MetricsPage, seconds: float) -> MetricsWindow:
    # vLLM's window reads its own pages and leaves SGLang's as the shared one reads them
    return VLLM.metrics_between(earlier, later, seconds)


ENGINE = dataclasses.replace(
    SGLANG,
    name="sim",
    processes=PROCESSES,
    version_package=None,
    catalog_program=None,
    select_catalog=select_catalog,
    command_version=command_version,
    check=check,
    preflight_request=_preflight_request,
    differences=differences,
    read_metrics=read_metrics,
    metrics_between=metrics_between,
    default_port=lambda cmd: _imitation(cmd).engine.default_port(cmd),
    model_of=lambda cmd: (i := _imitation(cmd)).engine.model_of(i.view),
    imitates=lambda cmd: _imitation(cmd).engine.name,
    node_of=lambda cmd: (i := _imitation(cmd)).engine.node_of(i.view),
    fleet=None,  # its /metrics carry the imitated engine's names: a fleet sees that engine
)
