"""The simulated server's torch.compile cache: a run finds its model's compiled graphs
when an earlier run with the same model and parallelism left them.

Only where the environment names a cache root (`VLLM_CACHE_ROOT`, vLLM's own variable):
without it every run compiles anew, so simulated runs sharing a home directory do
not change each other's logs. `VLLM_DISABLE_COMPILE_CACHE=1` turns the cache off, as in
vLLM.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from sgwatch.sim.vllm.args import VllmArgs

ROOT_ENV = "VLLM_CACHE_ROOT"


def cache_root() -> str:
    """Where the log says the cache is (vLLM's default when the environment says none)."""
    return os.environ.get(ROOT_ENV) or "/root/.cache/vllm"


def compile_cache(a: VllmArgs) -> tuple[str, bool] | None:
    """(the run's cache key, whether its graphs are already there: a hit); None without a
    cache root. A miss leaves the graphs for the next run."""
    root = os.environ.get(ROOT_ENV)
    if not root or os.environ.get("VLLM_DISABLE_COMPILE_CACHE") == "1":
        return None
    key = hashlib.sha256(f"{a.model.path}|{a.tp}".encode()).hexdigest()[:10]
    done = Path(root, "torch_compile_cache", key, "graphs")
    if done.exists():
        return key, True
    done.parent.mkdir(parents=True, exist_ok=True)
    done.touch()
    return key, False
