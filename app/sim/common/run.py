"""A simulated run, resolved: what the shared scheduler and HTTP layer read.

Each engine's parser (sglang/args.py, vllm/args.py) reads its own flags and fills
these from them; the simulator's own `--sim-*` flags, which either engine takes,
are declared here once.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass

from sgwatch.sim.common.model import ModelInfo


@dataclass(frozen=True, slots=True)
class SimOptions:
    speed: float  # simulated seconds per real second
    seed: int
    tok_s: float | None  # single-request decode rate; None = derived from the model
    warmup_seconds: float  # extra time the first request takes (kernel JIT)


def own_args(p: argparse.ArgumentParser) -> None:
    """The simulator's own flags, which either imitated engine takes."""
    a = p.add_argument
    a("--sim-speed", type=float, default=1.0, help="simulated seconds per real second")
    a("--sim-seed", type=int, help="seed for the simulated jitter")
    a("--sim-tok-s", type=float, help="single-request decode tok/s (default: from the model)")
    a("--sim-warmup-seconds", type=float, default=1.5, help="first-request JIT time")


def options(ns: argparse.Namespace, parser: argparse.ArgumentParser) -> SimOptions:
    """The `--sim-*` flags read; a speed that is not positive is a usage error."""
    if ns.sim_speed <= 0:
        parser.error(f"argument --sim-speed: must be positive, got {ns.sim_speed}")
    return SimOptions(
        speed=ns.sim_speed,
        seed=ns.sim_seed if ns.sim_seed is not None else random.randrange(2**31),
        tok_s=ns.sim_tok_s,
        warmup_seconds=max(0.0, ns.sim_warmup_seconds),
    )


@dataclass(slots=True)
class Run:
    """The engine-neutral settings of a simulated server."""

    sim: SimOptions
    model: ModelInfo
    model_path: str
    served_model_name: str
    host: str
    port: int
    tp: int
    dtype: str  # as the logs print it: torch.bfloat16
    max_running_requests: int
    chunked_prefill_size: int  # the most new tokens one prefill batch takes
    cuda_graph: bool  # decode steps replay graphs (fewer kernel launches)
    piecewise: bool  # prefill batches replay graphs too
    torch_compile: bool
    spec: str | None  # the speculative algorithm's acceptance model (EAGLE, NEXTN, ...)
    spec_steps: int
    spec_draft_tokens: int
    overlap: bool  # the scheduler's CPU work overlaps the GPU's
    decode_log_interval: int  # decode steps between batch lines

    @property
    def draft_gib(self) -> float:
        """The draft model's weights per rank (0 without speculative decoding): NEXTN's
        MTP head is ~3 % of the target, an EAGLE head ~2 %."""
        if not self.spec:
            return 0.0
        share = 0.03 if self.spec == "NEXTN" else 0.02
        return max(0.3, self.model.weights_gib * share) / self.tp
