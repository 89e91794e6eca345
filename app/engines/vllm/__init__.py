"""vLLM: log parser, process patterns, effective settings.

ENGINE is what the rest of sgwatch sees of it (engines/base.py); the registry
in engines/__init__.py lists it. Its flag catalog, preflight and /metrics are
not read yet: the catalog is empty (no flag is judged), a preflight is refused
and /metrics reads as unavailable, until vLLM's own modules for them land here.
"""

from __future__ import annotations

from typing import Any

from sgwatch.core.cmdline import LaunchCommand
from sgwatch.engines.base import Engine, ProcessPattern
from sgwatch.engines.sglang.catalog import Selection
from sgwatch.engines.sglang.flags import Catalog, Problem
from sgwatch.engines.sglang.metrics import MetricsError, MetricsPage, between
from sgwatch.engines.vllm import detect
from sgwatch.engines.vllm.effective import differences, ruled_out_phases, speed_changes
from sgwatch.engines.vllm.parse import Parser
from sgwatch.engines.vllm.prefix import split_prefix

PROCESSES = (
    ProcessPattern("serve", launcher=("vllm", "serve")),
    ProcessPattern("api_server", module="vllm.entrypoints.openai.api_server"),
)
_NO_CATALOG = Catalog(engine="vllm", options=())


def _select(_live: str | None, _version: str | None) -> Selection:
    return Selection(_NO_CATALOG, "bundled", "no vLLM flag catalog yet: flags are not checked")


def _check(_catalog: Catalog, _cmd: LaunchCommand) -> list[Problem]:
    return []


def _preflight_request(_cmd: LaunchCommand) -> dict[str, Any]:
    raise NotImplementedError("no preflight for vLLM commands yet")


def _read_metrics(_text: str) -> MetricsPage:
    raise MetricsError("vLLM's /metrics is not read yet")


ENGINE = Engine(
    name="vllm",
    processes=PROCESSES,
    version_package="vllm",
    default_port=8000,
    parser=Parser,
    split_prefix=split_prefix,
    wrote=detect.wrote,
    catalog_program=None,
    select_catalog=_select,
    command_version=lambda _cmd: None,
    check=_check,
    preflight_request=_preflight_request,
    differences=differences,
    read_metrics=_read_metrics,
    metrics_between=between,
    speed_changes=speed_changes,
    ruled_out_phases=ruled_out_phases,
)
