"""The bandwidth roofline: how close batch-1 decode is to what the GPUs' memory allows.

One decode step at batch 1 reads every weight of the rank once, so a GPU cannot
make tokens faster than

    memory bandwidth (bytes/s) / weight bytes per GPU

tensor parallelism is already in the per-rank figure (each rank reads its own
shard at the same time). With speculative decoding one step reads the target's
weights once and the draft model's once per draft step, and yields `accept
length` tokens:

    accept length × bandwidth / (target bytes + draft steps × draft bytes)

The ceiling comes from the target's weights (a draft load never replaces them).
KV-cache reads and kernel overheads are not counted: the ceiling is an upper bound.

SGLang's `Load weight end … mem usage=X GB` divides bytes by 2^30: it is GiB,
while bandwidth specs are decimal GB/s. Both are converted to bytes here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sgwatch.core.gpu_bandwidth import lookup

GIB = 1 << 30
GB = 10**9
# From this share on, batch-1 decode is mostly the weight reads: the rest is small.
MEMORY_BOUND_PCT = 60.0


@dataclass(frozen=True, slots=True)
class Roofline:
    measured_tok_s: float | None
    ceiling_tok_s: float | None  # None when it cannot be computed; `assumptions` says why
    percent: float | None  # measured / ceiling, in %
    assumptions: str  # one line: how the ceiling was reached, or what is missing
    accept_len: float | None = None  # speculative decoding's, when the ceiling counts it

    def said(self, source: str = "") -> str:
        """What the screen shows: `measured 24.1 tok/s (source) = 85 % of the bandwidth
        ceiling 28.4 tok/s: memory bound, …`."""
        if self.ceiling_tok_s is None:
            return f"roofline: {self.assumptions}"
        ceiling = f"bandwidth ceiling {self.ceiling_tok_s:.1f} tok/s"
        if self.accept_len is not None:
            ceiling += f" at accept length {self.accept_len:.2f}"
        if self.measured_tok_s is None or self.percent is None:
            return f"{ceiling}; no batch-1 measurement yet"
        measured = f"measured {self.measured_tok_s:.1f} tok/s" + (f" ({source})" if source else "")
        return f"{measured} = {self.percent:.0f} % of the {ceiling}: {self.verdict}"

    @property
    def verdict(self) -> str:
        """What the share means for tuning, in words."""
        if self.percent is None:
            return ""
        if self.percent >= MEMORY_BOUND_PCT:
            return "memory bound, CUDA-graph flags will not move decode much"
        return "well below the ceiling: per-step overheads (launches, scheduling) cost decode"


def roofline(
    measured_tok_s: float | None,
    *,
    gpu_names: Sequence[str],
    weights_gib: Mapping[str, float],
    tp: int | None = None,
    accept_len: float | None = None,
    draft_gib: Mapping[str, float] | None = None,
    draft_steps: int | None = None,
    bandwidth_gb_s: float | None = None,
) -> Roofline:
    """The ceiling for one server.

    gpu_names: the server's GPUs as nvidia-smi names them; bandwidth_gb_s (the
    config's `gpu_bandwidth_gbps`) overrides the table. weights_gib: weight memory
    per rank from the target model's `Load weight end` lines; the largest rank sets
    the pace. accept_len: the measured mean accept length when speculative decoding is
    on; draft_gib and draft_steps: the draft model's weights per rank and its forward
    passes per step, read on top of the target's once speculative decoding's accept
    length is known (until then the ceiling is per target step: a draft load alone
    does not move it).
    """
    bandwidth = _bandwidth(gpu_names, bandwidth_gb_s)
    if isinstance(bandwidth, str):
        return Roofline(measured_tok_s, None, None, bandwidth)
    gb_s, source = bandwidth
    if not weights_gib:
        why = "no weight memory known yet (no `Load weight end … mem usage` line seen)"
        return Roofline(measured_tok_s, None, None, why)
    per_gpu = max(weights_gib.values())
    parts = ["batch-1 decode"]
    if draft_gib and draft_steps and accept_len is not None:
        draft = max(draft_gib.values())
        read = per_gpu + draft_steps * draft
        parts.append(
            f"target weights {per_gpu:.2f} GiB/GPU + draft {draft:.2f} GiB × {draft_steps} "
            "steps read once per step (KV cache not counted)"
        )
    else:
        read = per_gpu
        per = "step" if accept_len is not None else "token"
        parts.append(f"weights {per_gpu:.2f} GiB/GPU read once per {per} (KV cache not counted)")
    ceiling = gb_s * GB / (read * GIB)
    parts.append(f"{gb_s:g} GB/s per GPU ({source})")
    if tp := tp or len(weights_gib):
        parts.append(f"TP {tp}")
    if accept_len is not None:
        ceiling *= accept_len
        parts.append(f"× accept length {accept_len:.2f} (speculative decoding)")
    percent = None if measured_tok_s is None else 100.0 * measured_tok_s / ceiling
    return Roofline(measured_tok_s, ceiling, percent, ", ".join(parts), accept_len)


def _bandwidth(names: Sequence[str], override: float | None) -> tuple[float, str] | str:
    """(GB/s, where the figure comes from), or the reason there is none."""
    if override is not None:
        return override, "config gpu_bandwidth_gbps"
    if not names:
        return "no GPU model known (nvidia-smi named none): set gpu_bandwidth_gbps in the config"
    found = []
    for name in dict.fromkeys(names):
        bw = lookup(name)
        if bw is None:
            return f"unknown GPU model {name!r}: set gpu_bandwidth_gbps (GB/s) in the config"
        found.append(bw)
    slowest = min(found, key=lambda bw: bw.gb_s)
    # Mixed cards: the slowest one holds every rank back at each step.
    label = slowest.model if len(found) == 1 else f"{slowest.model}, the slowest of the GPUs"
    return slowest.gb_s, label
