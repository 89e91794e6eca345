"""The simulated scheduler: continuous batching, the engine's batch log lines, tok/s.

One loop serves every request. New requests are prefilled as one batch (SGLang
logs a `Prefill batch` line), then decoded together; every `decode_log_interval`
steps (SGLang's `--decode-log-interval`, 40) a `Decode batch` line reports the
batch and its throughput. vLLM prints no batch lines (its lines are None).

A decode step is memory-bound: it reads this rank's weights once at the card's
bandwidth (the GPU the simulator plays, SGWATCH_SIM_GPU_NAME), plus a small cost
per running request and a fixed launch overhead that CUDA graphs shrink.
Speculative decoding adds the draft model's passes (its weights read once per
draft step, and a launch each) and, without the overlap scheduler, the CPU's
scheduling between steps, and accepts several tokens per step (`accept len`).
`--sim-tok-s` pins the single-request rate instead. Time is
simulated: the loop wakes every few real milliseconds and runs as many steps
as fit in the simulated time that passed, so the reported tok/s holds at any
`--sim-speed`.
"""

from __future__ import annotations

import asyncio
import math
import random
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

from sgwatch.core.gpu_bandwidth import lookup
from sgwatch.sim.common.clock import SimClock
from sgwatch.sim.common.gpustate import GpuSpec, Publisher
from sgwatch.sim.common.metrics import Metrics
from sgwatch.sim.common.run import Run

BANDWIDTH_SHARE = 0.85  # of the card's memory bandwidth a batch-1 decode step reaches
UNKNOWN_CARD_GB_S = 3350.0  # a card the bandwidth table does not know: H100-class
LAUNCH_S, EAGER_LAUNCH_S = 0.004, 0.012  # a step's kernel launches, with and without graphs
DRAFT_PASS_S = 0.001  # one draft step's graph replay and sampling
CPU_GAP_S = 0.002  # the scheduler's work between steps when the overlap scheduler is off
EFFECTIVE_FLOPS = 4e14
TICK_S = 0.005  # real seconds between scheduler wake-ups under load
PREFILL_LAUNCH_S = 0.008  # a prefill batch's kernel launches without graphs
# Mean tokens accepted per draft token past the first, by algorithm.
_ACCEPT = {"EAGLE": 0.62, "EAGLE3": 0.7, "NEXTN": 0.65, "STANDALONE": 0.55, "NGRAM": 0.35}


class BatchLines(Protocol):
    """Writes the engine's per-batch log lines (vLLM's write nothing)."""

    def prefill_batch(
        self,
        new_seq: int,
        new_token: int,
        cached: int,
        usage: float,
        running: int,
        queued: int,
        graph: bool,
        tok_s: float,
    ) -> None: ...

    def decode_batch(
        self,
        running: int,
        tokens: int,
        usage: float,
        accept: tuple[float, float] | None,
        graph: bool,
        tok_s: float,
        queued: int,
    ) -> None: ...


@dataclass(eq=False)
class Request:
    prompt_tokens: int
    max_new_tokens: int
    natural_len: int | None  # where the model would stop on its own (EOS)
    rid: str = field(default_factory=lambda: uuid.uuid4().hex)
    generated: int = 0
    cached_tokens: int = 0
    finish_reason: str | None = None
    arrived: float = 0.0
    # Token counts as they are produced; None once the request is finished.
    stream: asyncio.Queue[int | None] = field(default_factory=asyncio.Queue)

    @property
    def limit(self) -> int:
        if self.natural_len is None:
            return self.max_new_tokens
        return min(self.max_new_tokens, self.natural_len)


class Scheduler:
    def __init__(
        self,
        args: Run,
        lines: BatchLines,
        clock: SimClock,
        gpus: Publisher,
        kv_tokens: int,
        metrics: Metrics,
    ) -> None:
        self.args, self.lines, self.clock, self.gpus = args, lines, clock, gpus
        self.kv_tokens = max(1, kv_tokens)
        self.metrics = metrics
        self.rng = random.Random(args.sim.seed + 1)
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self._wake = asyncio.Event()
        self._jit_pending = True  # the first batch compiles kernels
        self._seen_prompts: set[int] = set()
        self._steps = 0
        self._window_tokens = 0
        self._window_time = 0.0
        self._window_accept = 0.0
        self._window_steps = 0
        card = lookup(GpuSpec.from_env().name)
        gb_s = card.gb_s if card is not None else UNKNOWN_CARD_GB_S
        self._read_gib_s = gb_s * 1e9 * BANDWIDTH_SHARE / 2**30
        self._draft_gib = args.draft_gib

    # -- requests ---------------------------------------------------------------

    def submit(
        self, prompt_tokens: int, max_new_tokens: int, natural_len: int | None, prompt_key: int
    ) -> Request:
        req = Request(max(1, prompt_tokens), max(1, max_new_tokens), natural_len)
        if prompt_key in self._seen_prompts:  # the radix cache holds the prompt
            req.cached_tokens = req.prompt_tokens - 1
        self._seen_prompts.add(prompt_key)
        req.arrived = self.clock.elapsed()
        self.waiting.append(req)
        self.metrics.prompt_tokens += req.prompt_tokens
        self._wake.set()
        return req

    @property
    def active(self) -> list[Request]:
        return [*self.running, *self.waiting]

    # -- the loop -----------------------------------------------------------------

    async def run(self) -> None:
        carry = 0.0
        last = self.clock.elapsed()
        while True:
            if not self.waiting and not self.running:
                self._set_util()
                self._wake.clear()
                await self._wake.wait()
                last = self.clock.elapsed()
                carry = 0.0
            if self.waiting and len(self.running) < self.args.max_running_requests:
                await self._prefill()
                last = self.clock.elapsed()
                continue
            await asyncio.sleep(TICK_S)
            now = self.clock.elapsed()
            carry += now - last
            last = now
            while self.running and carry >= (step := self.step_seconds(len(self.running))):
                carry -= step
                self._decode_step(step)
                if self.waiting:
                    break  # admit newcomers before the next step
            if not self.running:
                carry = 0.0

    def step_seconds(self, batch: int) -> float:
        a = self.args
        if a.sim.tok_s:
            step = 1.0 / a.sim.tok_s + 0.00008 * (batch - 1)
            return step * (1 + 0.15 * a.spec_steps) if a.spec else step
        read = a.model.weights_gib / a.tp * (0.3 if a.model.moe else 1.0)
        step = read / self._read_gib_s * (0.9 if a.torch_compile else 1.0)
        step += (LAUNCH_S if a.cuda_graph else EAGER_LAUNCH_S) + 0.0003 * math.log2(a.tp)
        step += 0.00008 * (batch - 1)
        if a.spec:
            step += a.spec_steps * (self._draft_gib / self._read_gib_s + DRAFT_PASS_S)
            if not a.overlap:
                step += CPU_GAP_S
        return step

    def _accept_mean(self) -> float:
        a = self.args
        if not a.spec:
            return 1.0
        return 1.0 + (a.spec_draft_tokens - 1) * _ACCEPT[a.spec]

    async def _prefill(self) -> None:
        room = self.args.max_running_requests - len(self.running)
        batch: list[Request] = []
        budget = self.args.chunked_prefill_size
        while self.waiting and len(batch) < room:
            new = self.waiting[0].prompt_tokens - self.waiting[0].cached_tokens
            if batch and new > budget:
                break
            batch.append(self.waiting.popleft())
            budget -= new
        new_tokens = sum(r.prompt_tokens - r.cached_tokens for r in batch)
        a = self.args
        active_b = a.model.params_b / a.tp * (0.15 if a.model.moe else 1.0)
        # Piecewise CUDA graphs replay prefill and extend instead of launching each kernel;
        # decode is bandwidth bound and does not notice them.
        launch = PREFILL_LAUNCH_S / 4 if a.piecewise else PREFILL_LAUNCH_S
        seconds = launch + new_tokens * 2 * active_b * 1e9 / EFFECTIVE_FLOPS
        if self._jit_pending:
            seconds += a.sim.warmup_seconds
            self._jit_pending = False
        self.gpus.util(min(100.0, 60.0 + new_tokens / 100))
        await self.clock.sleep(seconds)
        self.lines.prefill_batch(
            len(batch),
            new_tokens,
            sum(r.cached_tokens for r in batch),
            self._usage(),
            len(self.running),
            len(self.waiting),
            a.cuda_graph,
            new_tokens / seconds,
        )
        now = self.clock.elapsed()
        for r in batch:  # prefill yields each request's first token
            self.metrics.ttft.observe(now - r.arrived)
            self._emit(r, 1)
        self.running.extend(r for r in batch if r.finish_reason is None)
        self._set_util()

    def _decode_step(self, step: float) -> None:
        mean = self._accept_mean()
        produced = 0
        for r in list(self.running):
            n = 1
            if self.args.spec:
                n = min(self.args.spec_draft_tokens, int(mean + self.rng.random()))
            n = min(n, r.limit - r.generated)
            produced += n
            self._window_accept += n
            self.metrics.itl.observe(step / n, times=n)
            self._emit(r, n)
        self._window_steps += len(self.running) or 1
        self.running = [r for r in self.running if r.finish_reason is None]
        self._steps += 1
        self._window_tokens += produced
        self._window_time += step * self.rng.uniform(0.97, 1.03)
        if self._steps % self.args.decode_log_interval == 0:
            self._log_decode()
        self._set_util()

    def _emit(self, r: Request, n: int) -> None:
        r.generated += n
        self.metrics.generation_tokens += n
        r.stream.put_nowait(n)
        if r.generated >= r.limit:
            r.finish_reason = "length" if r.generated >= r.max_new_tokens else "stop"
            self.metrics.e2e.observe(self.clock.elapsed() - r.arrived)
            self.metrics.requests += 1
            r.stream.put_nowait(None)

    def _log_decode(self) -> None:
        tok_s = self._window_tokens / self._window_time if self._window_time else 0.0
        accept = None
        if self.args.spec:
            length = self._window_accept / max(1, self._window_steps)
            rate = (length - 1) / max(1, self.args.spec_draft_tokens - 1)
            accept = (length, rate)
            self.metrics.accept_length = length
        self.metrics.gen_throughput = tok_s
        self.lines.decode_batch(
            len(self.running),
            self._kv_in_use(),
            self._usage(),
            accept,
            self.args.cuda_graph,
            tok_s,
            len(self.waiting),
        )
        self._window_tokens = 0
        self._window_time = 0.0
        self._window_accept = 0.0
        self._window_steps = 0

    def _kv_in_use(self) -> int:
        return sum(r.prompt_tokens + r.generated for r in self.running)

    def _usage(self) -> float:
        return min(1.0, self._kv_in_use() / self.kv_tokens)

    def _set_util(self) -> None:
        n = len(self.running)
        self.metrics.running, self.metrics.queued = n, len(self.waiting)
        self.metrics.token_usage = self._usage()
        self.gpus.util(0.0 if n == 0 else min(99.0, 35.0 + 4.0 * n))
