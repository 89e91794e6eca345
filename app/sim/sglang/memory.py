"""Per-rank GPU memory, planned the way SGLang sizes it.

SGLang loads the weights, then gives the KV cache whatever is left of
`total * mem_fraction_static`; graph capture and activations must fit in the
remaining `total * (1 - mem_fraction_static)`. So a fraction set too low
leaves no KV cache ("Not enough memory"), one set too high leaves no room for
the CUDA graphs (capture fails with CUDA out of memory), and weights bigger
than the card fail while loading. All figures are GiB, which SGLang prints as "GB".
"""

from __future__ import annotations

from dataclasses import dataclass

CONTEXT_GIB = 0.6  # CUDA context, NCCL and allocator state before the weights
ACTIVATION_GIB = 1.0  # kept free during capture for the forward pass itself


def graph_gib(kind: str, items: int) -> float:
    """What capturing `items` graphs of a kind takes (real logs: 36 bs ~ 1 GB)."""
    if kind in ("decode", "verify"):
        return (0.25 + 0.022 * items) * (1.2 if kind == "verify" else 1.0)
    if kind in ("piecewise", "prefill"):
        return 0.2 + 0.006 * items
    return 0.1 + 0.01 * items  # draft, draft_extend


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    total: float
    weights: float  # target weights on one rank
    draft_weights: float
    mem_fraction_static: float

    @property
    def after_weights(self) -> float:
        return self.total - CONTEXT_GIB - self.weights - self.draft_weights

    @property
    def kv(self) -> float:
        """The KV pool; zero or less means SGLang's "Not enough memory"."""
        return self.after_weights - self.total * (1 - self.mem_fraction_static)

    @property
    def after_pool(self) -> float:
        return self.after_weights - max(self.kv, 0.0)

    @property
    def weights_fit(self) -> bool:
        return self.total - CONTEXT_GIB - self.weights > 0

    def capture_failure(self, captures: list[tuple[str, int]]) -> tuple[int, int] | None:
        """(capture index, item index) where memory runs out, or None if all fit."""
        budget = self.after_pool - ACTIVATION_GIB
        for i, (kind, items) in enumerate(captures):
            need = graph_gib(kind, items)
            if need > budget:  # the largest sizes go first and take the most
                return i, min(items - 1, int(max(budget, 0.0) / need * items * 0.5))
            budget -= need
        return None
