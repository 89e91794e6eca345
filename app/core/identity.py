"""Which run a server is: its model, parallelism, speculation, node and release.

Each engine reads this from its own settings (its parser attaches it to the event
that carries them, core/events.py RunStarted); everything outside the engine reads
these fields, never the engine's argument names. A field is None where the log
does not say.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Speculative:
    algorithm: str  # as the engine names it: "EAGLE3", "NEXTN", "eagle", "ngram"
    num_steps: int | None = None  # draft passes per decode step
    draft_tokens: int | None = None  # tokens the target verifies per step, drafts included
    draft_model: str | None = None


@dataclass(frozen=True, slots=True)
class RunIdentity:
    model: str | None = None
    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    ep: int | None = None
    speculative: Speculative | None = None
    node_rank: int | None = None  # of a server spread over several hosts
    nnodes: int | None = None
    release: str | None = None  # when the log states it

    @property
    def parallel(self) -> str:
        """Each parallel size above 1, "TP8 DP2" (empty for one GPU): as the header
        shows it and the restart history compares runs by it."""
        sizes = (("TP", self.tp), ("DP", self.dp), ("PP", self.pp), ("EP", self.ep))
        return " ".join(f"{k}{n}" for k, n in sizes if n is not None and n > 1)


def as_int(value: object) -> int | None:
    """A setting that should be a count, as logged; None when it is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
