"""The simulated vLLM keeps its torch.compile cache where the environment names one
(VLLM_CACHE_ROOT): its first run of a model compiles anew, its second loads the graphs
from the cache, and each log reads as such."""

from __future__ import annotations

from sgwatch.cli.replay import read_log
from tests.sim.simproc import Sim, sim_env

TOTAL = b"torch.compile takes"


def test_a_second_run_with_the_cache_kept_is_a_hit(tmp_path):
    env = {**sim_env(tmp_path / "gpu-state"), "VLLM_CACHE_ROOT": str(tmp_path / "cache")}
    seen = []
    for run in ("first", "second"):
        folder = tmp_path / run
        folder.mkdir()
        sim = Sim(["vllm", "serve", "Qwen/Qwen3-0.6B", "--sim-speed", "60"], folder, env)
        try:
            sim.wait_for(TOTAL, 60)
        finally:
            sim.close()
        with open(sim.log_path, "rb") as f:
            seen.append(read_log(f).compile)
    first, second = seen
    assert first is not None and first.cache == "miss"
    assert second is not None and second.cache == "hit"
    assert second.seconds < first.seconds  # its graphs loaded, not compiled
