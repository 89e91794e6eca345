"""The shared scheduler as vLLM runs it: no batch lines, and what vLLM's stats count.

vLLM reports drafts and accepted tokens per position (its SpecDecoding line and
/metrics) and prefix-cache queries and hits, where SGLang logs a line per batch.
"""

from __future__ import annotations

from sgwatch.sim.common.clock import SimClock
from sgwatch.sim.common.gpustate import Publisher
from sgwatch.sim.common.scheduler import Request as Job
from sgwatch.sim.common.scheduler import Scheduler
from sgwatch.sim.vllm.args import VllmArgs
from sgwatch.sim.vllm.metrics import VllmMetrics


class NoBatchLines:
    """vLLM logs no per-batch lines (its API server's stats come every 10 s instead)."""

    def prefill_batch(self, *_values: object) -> None:
        pass

    def decode_batch(self, *_values: object) -> None:
        pass


class VllmScheduler(Scheduler):
    """The shared scheduler, counting what vLLM reports: drafts and accepted tokens
    per position, and prefix-cache queries and hits."""

    def __init__(
        self,
        args: VllmArgs,
        clock: SimClock,
        gpus: Publisher,
        kv_tokens: int,
        metrics: VllmMetrics,
    ) -> None:
        super().__init__(args.run, NoBatchLines(), clock, gpus, kv_tokens, metrics)
        self.metrics: VllmMetrics = metrics
        self._k = args.num_spec_tokens
        self._decoding = False

    def submit(self, prompt_tokens, max_new_tokens, natural_len, prompt_key) -> Job:
        job = super().submit(prompt_tokens, max_new_tokens, natural_len, prompt_key)
        self.metrics.prefix_queries += job.prompt_tokens
        self.metrics.prefix_hits += job.cached_tokens
        return job

    def _decode_step(self, step: float) -> None:
        self._decoding = True
        try:
            super()._decode_step(step)
        finally:
            self._decoding = False

    def _emit(self, r: Job, n: int) -> None:
        if self._decoding and self._k:
            m = self.metrics
            m.drafts += 1
            m.draft_tokens += self._k
            m.accepted += n - 1
            for pos in range(min(n - 1, self._k)):
                m.accepted_per_pos[pos] += 1
        super()._emit(r, n)
