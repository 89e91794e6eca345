"""The bandwidth roofline: how close batch-1 decode is to what the GPUs' memory allows.

One decode step at batch 1 reads every weight of the rank once, so a GPU cannot
make tokens faster than

    memory bandwidth (bytes/s) / weight bytes per GPU

tensor parallelism is already in the per-rank figure (each rank reads its own
shard at the same time). With speculative decoding one step of the target model
yields `accept length` tokens, so the ceiling scales by it. KV-cache reads, the
draft model and kernel overheads are not counted: the ceiling is an upper bound.

SGLang's `Load weight end … mem usage=X GB` divides bytes by 2^30: it is GiB,
while bandwidth specs are decimal GB/s. Both are converted to bytes here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sgwatch.core.gpu_bandwidth import lookup

GIB = 1 << 30
GB = 10**9


@dataclass(frozen=True, slots=True)
class Roofline:
    measured_tok_s: float | None
    ceiling_tok_s: float | None  # None when it cannot be computed; `assumptions` says why
    percent: float | None  # measured / ceiling, in %
    assumptions: str  # one line: how the ceiling was reached, or what is missing

    @property
    def line(self) -> str:
        """What the screen shows: `measured 24.1 tok/s = 85 % of the bandwidth ceiling …`."""
        if self.ceiling_tok_s is None:
            return f"roofline: {self.assumptions}"
        ceiling = f"bandwidth ceiling {self.ceiling_tok_s:.1f} tok/s"
        if self.measured_tok_s is None or self.percent is None:
            return f"{ceiling}; no batch-1 measurement yet"
        return f"measured {self.measured_tok_s:.1f} tok/s = {self.percent:.0f} % of the {ceiling}"


def roofline(
    measured_tok_s: float | None,
    *,
    gpu_names: Sequence[str],
    weights_gib: Mapping[str, float],
    tp: int | None = None,
    accept_len: float | None = None,
    bandwidth_gb_s: float | None = None,
) -> Roofline:
    """The ceiling for one server.

    gpu_names: the server's GPUs as nvidia-smi names them; bandwidth_gb_s (the
    config's `gpu_bandwidth_gbps`) overrides the table. weights_gib: weight memory
    per rank from the `Load weight end` lines; the largest rank sets the pace.
    accept_len: the measured mean accept length when speculative decoding is on.
    """
    bandwidth = _bandwidth(gpu_names, bandwidth_gb_s)
    if isinstance(bandwidth, str):
        return Roofline(measured_tok_s, None, None, bandwidth)
    gb_s, source = bandwidth
    if not weights_gib:
        why = "no weight memory known yet (no `Load weight end … mem usage` line seen)"
        return Roofline(measured_tok_s, None, None, why)
    per_gpu = max(weights_gib.values())
    ceiling = gb_s * GB / (per_gpu * GIB)
    parts = [
        "batch-1 decode",
        f"weights {per_gpu:.2f} GiB/GPU read once per token (KV cache not counted)",
        f"{gb_s:g} GB/s per GPU ({source})",
    ]
    if tp := tp or len(weights_gib):
        parts.append(f"TP {tp}")
    if accept_len is not None:
        ceiling *= accept_len
        parts.append(f"× accept length {accept_len:.2f} (speculative decoding)")
    percent = None if measured_tok_s is None else 100.0 * measured_tok_s / ceiling
    return Roofline(measured_tok_s, ceiling, percent, ", ".join(parts))


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
