"""Plays a startup plan: per-rank log lines, tqdm bars on rank 0, GPU memory.

Ranks run in parallel in the real server, so each per-rank line comes from
every rank in a shuffled order within a fraction of a second. Bars are drawn
by rank 0 only; a line another rank logs while a bar is open is glued to it
(the MoE kernel-config notice on the first frame, a rank's capture-end line
on the last one, the traceback of a rank that ran out of memory). The weight
loader's bar ends each frame with a newline, as every real log shows it. The
avail mem figures come from a per-rank ledger that also feeds the nvidia-smi
stand-in.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Callable, Sequence
from typing import Any

from sgwatch.sim.common import bars
from sgwatch.sim.common.clock import SimClock
from sgwatch.sim.common.gpustate import IDLE_MIB, GpuSpec, Publisher
from sgwatch.sim.common.oom import cuda_oom
from sgwatch.sim.common.writer import ERROR, WARNING, Streams
from sgwatch.sim.sglang import crashes
from sgwatch.sim.sglang.args import ServerArgs
from sgwatch.sim.sglang.logfmt import Format05
from sgwatch.sim.sglang.memory import CONTEXT_GIB
from sgwatch.sim.sglang.timeline import BOOT_S, SPAWN_S, Capture, Plan, Weights

Lines = str | list[str] | None
# GPU utilisation while each kind of work runs.
UTIL_LOADING, UTIL_CAPTURE, UTIL_COMPILE = 4.0, 38.0, 1.0


class Startup:
    def __init__(
        self,
        args: ServerArgs,
        plan: Plan,
        fmt: Format05,
        out: Streams,
        gpus: Publisher,
        clock: SimClock,
        spec: GpuSpec,
    ) -> None:
        self.args, self.plan, self.fmt, self.out = args, plan, fmt, out
        self.gpus, self.clock, self.spec = gpus, clock, spec
        self.rng = random.Random(args.sim.seed)
        self.ranks = list(range(args.tp))
        # Other processes and fragmentation: each rank sees a little less free memory.
        self.offset = [0.0] + [self.rng.uniform(0.0, 0.3) for _ in self.ranks[1:]]
        self.used = [0.0 for _ in self.ranks]
        self.seconds: dict[str, float] = {}  # stage -> simulated seconds, for the timings line
        # SGLang's `startup_time` once the engine is up, in releases that report it.
        self.startup_time: dict[str, Any] | None = None

    async def run(self) -> bool:
        """True when startup completed; False after a crash has been logged."""
        t0 = self.clock.elapsed()
        await self._boot()
        await self._dist_init()
        if not await self._weights(self.plan.weights):
            return False
        if not await self._kv_pool():
            return False
        if self.args.cuda_graph and not self.args.piecewise:
            await self._each_rank(lambda r: self.fmt.prefill_disabled())
        for cap in self.plan.captures:
            if not await self._capture(cap, self.ranks):
                return False
        if self.plan.draft_weights is not None:
            if not await self._weights(self.plan.draft_weights):
                return False
            for cap in self.plan.draft_captures:
                if not await self._capture(cap, [0]):
                    return False
        await self.clock.sleep(0.4)
        a, kv = self.args, self.plan.kv
        self.out.log(
            self.fmt.capacity(
                kv.tokens,
                a.chunked_prefill_size,
                a.max_prefill_tokens,
                a.max_running_requests,
                a.context_length,
                self._avail(0),
            ),
            0,
        )
        graphs = {k: v for k, v in self.seconds.items() if k not in ("weights", "kv")}
        whole = self.clock.elapsed() - t0
        scheduler = whole - BOOT_S
        timings = self.fmt.startup_timings(
            self.seconds.get("weights", 0.0),
            self.seconds.get("kv", 0.0),
            scheduler,
            graphs,
            whole,
        )
        if timings:
            self.out.log(timings)
            # The same figures as the server's API gives them (/metrics, /server_info).
            self.startup_time = {
                "load_weight": self.seconds.get("weights", 0.0),
                "kv_cache_allocation": self.seconds.get("kv", 0.0),
                "scheduler_e2e": scheduler,
                "cuda_graph": graphs,
                "tokenizer_e2e": whole,
            }
        return True

    # -- stages -----------------------------------------------------------------

    async def _boot(self) -> None:
        a, fmt = self.args, self.fmt
        await self.clock.sleep(BOOT_S * 0.7)
        if warning := fmt.entrypoint_warning():
            self.out.raw(warning)
        if a.spec in ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE") and (notes := fmt.spec_notes()):
            # Resolution warns before logging is set up: Python's own record format.
            self.out.raw(notes)
        await self.clock.sleep(BOOT_S * 0.3)
        self.out.log(fmt.server_args(a.dump))
        if a.model.multimodal:
            reduced = a.mem_fraction_static if a.mem_fraction_auto else None
            for note in fmt.multimodal_notes(reduced):
                self.out.log(note, level=WARNING)
        if a.attention_auto:
            self.out.log(fmt.attention_default(a.attention_backend))
        await self.clock.sleep(SPAWN_S)

    async def _dist_init(self) -> None:
        seconds = self.plan.dist_seconds
        usage = 0.0 if self.args.tp == 1 else 0.5 + 0.2 * math.log2(self.args.tp)
        await self._each_rank(lambda r: self.fmt.dist_begin())
        for r in self.ranks:
            self._use(r, CONTEXT_GIB, seconds)
        await self.clock.sleep(seconds)
        await self._each_rank(lambda r: self.fmt.dist_end(seconds + self._jitter(0.05), usage))

    async def _weights(self, w: Weights) -> bool:
        fmt = self.fmt
        await self._each_rank(lambda r: fmt.load_begin(self._avail(r)))
        self.out.log(fmt.weights_format(), 0)
        self.gpus.util(UTIL_LOADING)
        for r in self.ranks:
            self._use(r, w.gib if not w.fails else self.spec.mem_gib, w.seconds)
        desc = "Loading safetensors checkpoint shards"
        t0 = self.clock.elapsed()
        self.out.frame(bars.loading(desc, 0, w.shards, 0.0), newline=True)
        for n in range(1, w.shards + 1):
            await self.clock.sleep(w.seconds / w.shards)
            if w.fails and n > w.shards // 2:
                self._crash(
                    crashes.weights_oom(fmt.name, self._oom(self.args.tp - 1, 1.2)),
                    self.args.tp - 1,
                )
                return False
            self.out.frame(bars.loading(desc, n, w.shards, self._since(t0)), newline=True)
        self.out.frame(bars.loading(desc, w.shards, w.shards, self._since(t0)), newline=True)
        self.out.raw([""])
        elapsed = self._since(t0)
        self.seconds["weights"] = self.seconds.get("weights", 0.0) + elapsed
        await self._each_rank(
            lambda r: fmt.load_end(
                elapsed + self._jitter(0.2),
                w.arch,
                self.args.dtype,
                self._avail(r),
                w.gib + self._jitter(0.02),
            )
        )
        return True

    async def _kv_pool(self) -> bool:
        kv = self.plan.kv
        await self.clock.sleep(kv.seconds)
        self.seconds["kv"] = kv.seconds
        if kv.gib <= 0:
            report = crashes.not_enough_memory(self.fmt.name, self.args.mem_fraction_static)
            self._crash(report, 0)
            return False
        half = kv.gib / 2
        for r in self.ranks:
            self._use(r, kv.gib, 0.3)
        await self._each_rank(
            lambda r: self.fmt.kv_allocated(self.args.dtype, kv.tokens, half, half)
        )
        await self._each_rank(lambda r: self.fmt.pool_end(self._avail(r)))
        return True

    async def _capture(self, cap: Capture, ranks: list[int]) -> bool:
        fmt, out = self.fmt, self.out
        spec = (self.args.spec_topk, self.args.spec_draft_tokens)
        avail0 = {r: self._avail(r) for r in ranks}
        t0 = self.clock.elapsed()
        await self._each_rank(lambda r: fmt.capture_begin(cap, avail0[r], spec), ranks)
        if sizes := fmt.capture_sizes(cap):
            out.log(sizes, 0)
        items = list(reversed(cap.sizes))
        first = next(iter(self.plan.captures), None)
        first_glue = self._moe_notice(ranks) if cap is first else None
        if cap.compile_seconds:
            self.gpus.util(UTIL_COMPILE)
            await self._bar(
                items,
                cap.compile_seconds,
                cap.first_extra,
                lambda item, i: fmt.compile_desc(item),
                on_first=lambda: [out.raw(fmt.dynamo_warning()) for _ in ranks],
            )
        self.gpus.util(UTIL_CAPTURE)
        duration = cap.item_seconds * len(items) + cap.first_extra
        for r in ranks:
            self._use(r, cap.gib, duration)
        failing = max(ranks, key=lambda r: self.offset[r])
        last = ranks[-1]
        glue_end = len(ranks) > 1 and cap.fail_at is None

        def desc(item: int, i: int) -> str:
            return fmt.bar_desc(cap, item, avail0[0] - cap.gib * i / len(items))

        def end_line(r: int) -> str | None:
            usage = cap.gib + self._jitter(0.03)
            return fmt.capture_end(
                cap, self._since(t0) + self._jitter(0.02), usage, avail0[r] - usage
            )

        finished = await self._bar(
            items,
            cap.item_seconds,
            cap.first_extra,
            desc,
            on_first=first_glue,
            fail_at=cap.fail_at,
            before_close=(lambda: out.log(end_line(last) or "", last)) if glue_end else None,
        )
        if not finished:
            budget = max(0.05, avail0[failing] - cap.gib * (cap.fail_at or 0) / len(items) - 1.0)
            want = max(0.25, cap.gib / len(items) * 8)
            report = crashes.capture_oom(cap.kind, fmt.name, self._oom(failing, want, budget))
            self._crash(report, failing)
            return False
        self.seconds[_TIMING_KEYS[cap.kind]] = self._since(t0)
        if len(ranks) > 1 and (registering := fmt.capture_registering(cap)):
            out.log(registering, 0)
        rest = [r for r in ranks if not (glue_end and r == last)]
        await self._each_rank(end_line, rest, spread=0.1)
        return True

    # -- helpers ----------------------------------------------------------------

    async def _bar(
        self,
        items: list[int],
        seconds: float,
        first_extra: float,
        desc: Callable[[int, int], str],
        on_first: Callable[[], object] | None = None,
        fail_at: int | None = None,
        before_close: Callable[[], object] | None = None,
    ) -> bool:
        """A tqdm bar over `items`; False if it stopped at `fail_at` (left open)."""
        out, total = self.out, len(items)
        t0 = self.clock.elapsed()
        if self.fmt.bar_starts_blank():
            out.frame(bars.bar("", 0, total, 0.0))
        text = ""
        for i, item in enumerate(items):
            name = desc(item, i)
            out.frame(bars.bar(name, i, total, self._since(t0)))
            if i == 0 and on_first is not None:
                on_first()
            await self.clock.sleep(seconds + (first_extra if i == 0 else 0.0))
            if i == fail_at:
                return False
            text = bars.bar(name, i + 1, total, self._since(t0))
            out.frame(text)
        if before_close is not None:
            before_close()
        out.frame(text, newline=True)
        return True

    async def _each_rank(
        self, line: Callable[[int], Lines], ranks: Sequence[int] | None = None, spread: float = 0.3
    ) -> None:
        """Every rank logs its line, in a random order within `spread` seconds."""
        ranks = list(self.ranks if ranks is None else ranks)
        self.rng.shuffle(ranks)
        delays = sorted(self.rng.uniform(0.0, spread) for _ in ranks) if len(ranks) > 1 else [0]
        t0 = self.clock.elapsed()
        for r, delay in zip(ranks, delays, strict=True):
            await self.clock.sleep_until(t0 + delay)
            text = line(r)
            for msg in [text] if isinstance(text, str) else text or []:
                self.out.log(msg, r)

    def _moe_notice(self, ranks: list[int]) -> Callable[[], None] | None:
        if not self.args.model.moe:
            return None
        path = (
            f"{crashes.SITE}/srt/layers/moe/fused_moe_triton/configs/triton_3_4_0/"
            f"E=128,N={768 // self.args.tp},device_name={self.spec.name.replace(' ', '_')}.json"
        )
        order = self.rng.sample(ranks, len(ranks))
        return lambda: [self.out.log(self.fmt.moe_config(path), r) for r in order]

    def _crash(self, report: str, rank: int) -> None:
        self.out.log(report, rank, level=ERROR)
        self.out.log(crashes.SIGQUIT_FROM_CHILD, level=ERROR)
        if self.fmt.name == "0.5.23":
            self.out.log(crashes.kill_process_tree(os.getpid(), True))

    def _oom(self, rank: int, want: float, free: float = 0.3) -> str:
        gpu = self.args.base_gpu_id + rank
        return cuda_oom(gpu, want, self.spec.mem_gib - 0.46, free)

    def _use(self, rank: int, gib: float, seconds: float) -> None:
        self.used[rank] += gib
        start = self.clock.wall_at(self.clock.elapsed())
        mib = min(self.spec.mem_mib - IDLE_MIB, self.used[rank] * 1024)
        self.gpus.ramp(rank, mib, start, start + seconds / self.clock.speed)

    def _avail(self, rank: int) -> float:
        return max(0.0, self.spec.mem_gib - 0.46 - self.used[rank] - self.offset[rank])

    def _since(self, t0: float) -> float:
        return self.clock.elapsed() - t0

    def _jitter(self, scale: float) -> float:
        return self.rng.uniform(-scale, scale)


_TIMING_KEYS = {
    "decode": "decode",
    "verify": "target_verify",
    "prefill": "prefill",
    "piecewise": "piecewise",
    "draft": "draft_decode",
    "draft_extend": "draft_extend",
}
