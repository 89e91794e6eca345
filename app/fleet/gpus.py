"""A node's GPUs (dcgm-exporter, through the fleet's one GPU query) joined to its servers.

dcgm-exporter labels each card with the node's `Hostname`; its own scrape target has
an `instance` whose host is the node's address. A server finds its node by its
instance's host or its SSH host, against either; several servers on one node show
the same cards.
"""

from __future__ import annotations

from sgwatch.fleet.hostmap import split_instance
from sgwatch.fleet.promapi import Answer
from sgwatch.fleet.queries import MEASURE_LABEL


class GpuJoin:
    def __init__(self, answer: Answer | None) -> None:
        self._nodes: dict[str, dict[str, float]] = {}
        for sample in answer.samples if answer else ():
            measure = sample.labels.get(MEASURE_LABEL)
            if measure is None or sample.value is None:
                continue
            node = (sample.labels.get("Hostname", ""), sample.labels.get("instance", ""))
            for key in {node[0], split_instance(node[1])[0]} - {""}:
                self._nodes.setdefault(key, {})[measure] = sample.value

    def figures(self, instance: str, host: str | None) -> dict[str, float]:
        """The FleetRow GPU fields of a server, empty when no node matches."""
        for key in (split_instance(instance)[0], host):
            node = self._nodes.get(key) if key else None
            if node is not None:
                return _fields(node)
        return {}


def _fields(node: dict[str, float]) -> dict[str, float]:
    out = {}
    if "util" in node:
        out["gpu_util_pct"] = node["util"]
    if "power" in node:
        out["gpu_power_w"] = node["power"]
    if "fb_used" in node:
        out["gpu_mem_used_mib"] = node["fb_used"]
        if "fb_free" in node:
            out["gpu_mem_total_mib"] = node["fb_used"] + node["fb_free"]
    return out
