"""vLLM: log parser, process patterns, effective settings.

ENGINE is what the rest of sgwatch sees of it (engines/base.py); the registry
in engines/__init__.py lists it. Flags: the host's live catalog (host_catalog.py)
or a bundled one (catalog/), checked in vLLM's spellings (flags.py), preflight
through the host's own `make_arg_parser`; /metrics with `vllm:` names (metrics.py).
"""

from __future__ import annotations

from sgwatch.engines.base import Engine, ProcessPattern
from sgwatch.engines.vllm import detect
from sgwatch.engines.vllm.catalog import select
from sgwatch.engines.vllm.effective import differences, ruled_out_phases, speed_changes
from sgwatch.engines.vllm.flags import check, preflight_request
from sgwatch.engines.vllm.fleet import SERIES as FLEET_SERIES
from sgwatch.engines.vllm.identity import model_of
from sgwatch.engines.vllm.metrics import between, read_metrics
from sgwatch.engines.vllm.nodes import node_of
from sgwatch.engines.vllm.parse import Parser
from sgwatch.engines.vllm.prefix import split_prefix

PROCESSES = (
    ProcessPattern("serve", launcher=("vllm", "serve")),
    ProcessPattern("api_server", module="vllm.entrypoints.openai.api_server"),
)


ENGINE = Engine(
    name="vllm",
    processes=PROCESSES,
    version_package="vllm",
    default_port=lambda _cmd: 8000,
    parser=Parser,
    split_prefix=split_prefix,
    markers=detect.MARKERS,
    catalog_program=f"{__name__}.host_catalog",
    select_catalog=select,
    check=check,
    preflight_request=preflight_request,
    differences=differences,
    read_metrics=read_metrics,
    metrics_between=between,
    metrics_served=lambda _resolved: True,
    speed_changes=speed_changes,
    ruled_out_phases=ruled_out_phases,
    node_of=node_of,
    model_of=model_of,
    fleet=FLEET_SERIES,
)
