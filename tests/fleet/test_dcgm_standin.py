"""The simulated dcgm-exporter's page: dcgm-exporter's names, units and labels."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from sgwatch.sim.common.dcgm import page
from sgwatch.sim.common.gpustate import Card


def test_the_page_has_the_default_counters_per_card():
    cards = [
        Card(0, "NVIDIA H100 80GB HBM3", 81559, used_mib=20018, util=50.0),
        Card(1, "NVIDIA H100 80GB HBM3", 81559),
    ]
    families = {f.name: f for f in text_string_to_metric_families(page(cards, "node7"))}
    assert set(families) >= {
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_FB_FREE",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_XID_ERRORS",
    }
    used = {s.labels["gpu"]: s for s in families["DCGM_FI_DEV_FB_USED"].samples}
    assert used["0"].value == 20018 and used["1"].value == 18
    assert used["0"].labels["Hostname"] == "node7"
    assert used["0"].labels["modelName"] == "NVIDIA H100 80GB HBM3"
    assert used["0"].labels["UUID"].startswith("GPU-")
    free = {s.labels["gpu"]: s.value for s in families["DCGM_FI_DEV_FB_FREE"].samples}
    assert free["0"] == 81559 - 20018
    util = {s.labels["gpu"]: s.value for s in families["DCGM_FI_DEV_GPU_UTIL"].samples}
    assert util == {"0": 50.0, "1": 0.0}
