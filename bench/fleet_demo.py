"""A scripted fleet for looking at the fleet table: rows of both engines that move with time.

No Prometheus and no SSH: a FleetSource of our own that makes up its rows from the
clock, for seeing what a person sees (tmux) and for timing the table's keys
(bench/fleet_keys.py). One server warms up (weights, then CUDA graphs with an ETA,
then serving), one crashes in its capture, one is down; the rest serve or idle.

    python bench/fleet_demo.py [--rows 20] [--interval 5] [--stale-at S] [--warning]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sgwatch.fleet.row import FleetRow
from sgwatch.fleet.source import FleetSnapshot

MODELS = {
    "sglang": ("Qwen/Qwen3-32B", "deepseek-ai/DeepSeek-V3"),
    "vllm": ("meta-llama/Llama-3.1-70B-Instruct", "Qwen/Qwen3-32B"),
}
WARMING, CRASHING, DOWN, IDLE = 3, 6, 11, 14  # which rows do what (when there are that many)


def demo_row(i: int, t: float, t0: float) -> FleetRow:
    """Row i at t seconds after the start (t0, wall clock)."""
    engine = "sglang" if i % 2 == 0 else "vllm"
    port = 30000 if engine == "sglang" else 8000
    base = FleetRow(
        key=f"10.0.{i // 50}.{10 + i % 50}:{port}",
        instance=f"10.0.{i // 50}.{10 + i % 50}:{port}",
        state="serving",
        engine=engine,
        model=MODELS[engine][i // 2 % 2],
        job=f"{engine}-prod",
        host=None if i % 5 == 4 else f"gpu{i:02d}",
        gpu_mem_total_mib=8 * 81559.0,
        changed_at=t0 - 3600 - 97 * i,
    )
    wave = 1 + 0.15 * math.sin(t / 7 + i)
    serving = {
        "gen_tok_s": 2400 * wave,
        "running": 24 + i % 9,
        "waiting": i % 3,
        "kv_pct": 30 * wave + i % 40,
        "spec_accept": 2.41 if engine == "vllm" and i % 4 == 1 else None,
        "ttft_p50_s": 0.18 * wave,
        "itl_p50_s": 0.021 * wave,
        "gpu_util_pct": min(100.0, 85 * wave),
        "gpu_mem_used_mib": 8 * 73000.0,
        "gpu_power_w": 8 * 610 * wave,
    }
    if i == WARMING:
        return _warming(base, t, t0, serving)
    if i == CRASHING:
        if t < 12:
            return replace(base, state="warming", changed_at=t0, detail=_capture(t, 0, 30))
        return replace(
            base,
            state="crashed",
            changed_at=t0 + 12,
            detail="CUDA graphs: torch.OutOfMemoryError: CUDA out of memory. "
            "Tried to allocate 2.00 GiB",
        )
    if i == DOWN:
        return replace(base, state="down", detail="connection refused", changed_at=t0 - 600)
    if i == IDLE:
        quiet = {"gen_tok_s": 0.0, "running": 0, "waiting": 0, "kv_pct": 0.0, "gpu_util_pct": 0.0}
        return replace(base, state="idle", **quiet, gpu_power_w=8 * 95.0)
    return replace(base, **serving)


def _warming(base: FleetRow, t: float, t0: float, serving: dict) -> FleetRow:
    if t < 8:
        done = min(8, 1 + int(t))
        return replace(base, state="warming", changed_at=t0, detail=f"weights {done}/8")
    if t < 30:
        return replace(base, state="warming", changed_at=t0, detail=_capture(t, 8, 30))
    return replace(base, changed_at=t0 + 30, detail="ready in 30s", **serving)


def _capture(t: float, start: float, end: float) -> str:
    share = (t - start) / (end - start)
    return f"CUDA graphs {int(36 * share)}/36 ETA {end - t:.0f}s"


class ScriptedSource:
    """A FleetSource whose rows come from the clock; stale from `stale_at` seconds on."""

    def __init__(
        self,
        rows: int = 20,
        clock: Callable[[], float] = time.time,
        stale_at: float | None = None,
        warning: bool = False,
        name: str = "demo",
    ) -> None:
        self.name = name
        self.rows, self.clock, self.stale_at, self.warning = rows, clock, stale_at, warning
        self.t0 = clock()
        self._last: tuple[FleetRow, ...] = ()

    async def snapshot(self) -> FleetSnapshot:
        now = self.clock()
        t = now - self.t0
        if self.stale_at is not None and t >= self.stale_at:
            why = "prometheus.example:9090 unreachable: connection refused (next try in 10 s)"
            return FleetSnapshot(self._last, now, stale=True, problem=why)
        self._last = tuple(demo_row(i, t, self.t0) for i in range(self.rows))
        warnings = ("partial result: DCGM_FI_DEV_POWER_USAGE timed out",) if self.warning else ()
        return FleetSnapshot(self._last, now, warnings=warnings)

    async def close(self) -> None:
        pass


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=20)
    p.add_argument("--interval", type=float, default=5.0)
    p.add_argument("--stale-at", type=float, help="seconds after which the source stops answering")
    p.add_argument("--warning", action="store_true", help="every snapshot carries a warning")
    args = p.parse_args()
    from sgwatch.ui.fleet_app import run_fleet_dashboard

    source = ScriptedSource(args.rows, stale_at=args.stale_at, warning=args.warning)
    return run_fleet_dashboard(source, interval_s=args.interval)


if __name__ == "__main__":
    sys.exit(main())
