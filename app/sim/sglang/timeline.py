"""The startup schedule a set of flags implies: which stages, how long, what fails.

Pure: the resolved arguments in, a list of stages out. Durations are simulated
seconds for an H100-class card: weights stream at ~1.6 GiB/s per rank, each
captured batch size costs more on a bigger model slice, piecewise graphs are
compiled before they are captured, and the first item of a capture is slow
(kernel JIT). The memory plan decides whether and where startup fails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from sgwatch.sim.common.gpustate import GpuSpec
from sgwatch.sim.common.model import shards as checkpoint_shards
from sgwatch.sim.sglang.args import ServerArgs
from sgwatch.sim.sglang.memory import MemoryPlan, graph_gib

BOOT_S = 3.0  # interpreter and import time before the first log line
SPAWN_S = 4.0  # from the args dump to the schedulers' first line
# EAGLE heads are small Llama-style models; NEXTN/MTP layers ship with the target.
_DRAFT_ARCH = {"EAGLE": "LlamaForCausalLMEagle", "EAGLE3": "LlamaForCausalLMEagle3"}


@dataclass(frozen=True, slots=True)
class Weights:
    seconds: float
    shards: int
    gib: float  # per rank
    arch: str  # what "Load weight end. type=..." names
    fails: bool  # weights bigger than the card: CUDA OOM while loading


@dataclass(frozen=True, slots=True)
class KvPool:
    seconds: float
    tokens: int
    gib: float  # K + V on one rank; <= 0 is SGLang's "Not enough memory"


@dataclass(frozen=True, slots=True)
class Capture:
    kind: str  # decode | verify | piecewise | prefill | draft | draft_extend
    sizes: list[int]  # as announced (ascending); captured largest first
    item_seconds: float
    first_extra: float  # JIT and autotune on the first item
    compile_seconds: float  # per item, piecewise graphs only (0: none)
    gib: float
    fail_at: int | None  # item index where CUDA runs out of memory


@dataclass(frozen=True, slots=True)
class Plan:
    dist_seconds: float
    weights: Weights
    kv: KvPool
    captures: list[Capture]  # target captures (after the pool)
    draft_weights: Weights | None
    draft_captures: list[Capture]


def build(args: ServerArgs, spec: GpuSpec) -> Plan:
    m = args.model
    tp = args.tp
    weights = m.weights_gib / tp
    draft = args.draft_gib
    mem = MemoryPlan(spec.mem_gib, weights, draft, args.mem_fraction_static)
    slice_b = m.params_b / tp * (0.35 if m.moe else 1.0)  # MoE runs its active experts
    captures = _target_captures(args, slice_b)
    drafts = _draft_captures(args) if args.spec else []
    fail = mem.capture_failure([(c.kind, len(c.sizes)) for c in captures + drafts])
    if fail is not None:
        index, item = fail
        everything = [*captures, *drafts]
        everything[index] = replace(everything[index], fail_at=item)
        captures, drafts = everything[: len(captures)], everything[len(captures) :]
    kv_gib = max(mem.kv, 0.0)
    return Plan(
        dist_seconds=1.0 + 0.4 * math.log2(tp),
        weights=_weights(m.weights_gib, weights, m.arch, fits=mem.weights_fit),
        kv=KvPool(
            seconds=0.6 + kv_gib * 0.01,
            tokens=int(kv_gib * 2**30 / m.kv_bytes_per_token(tp)),
            gib=mem.kv,
        ),
        captures=captures,
        draft_weights=(
            _weights(draft * tp, draft, _DRAFT_ARCH.get(args.spec, m.nextn_arch), True, shards=1)
            if args.spec
            else None
        ),
        draft_captures=drafts,
    )


def _weights(
    total_gib: float, rank_gib: float, arch: str, fits: bool, shards: int | None = None
) -> Weights:
    return Weights(
        seconds=1.0 + rank_gib / 1.6,
        shards=shards or checkpoint_shards(total_gib),
        gib=rank_gib,
        arch=arch,
        fails=not fits,
    )


def _target_captures(args: ServerArgs, slice_b: float) -> list[Capture]:
    if not args.cuda_graph:
        return []
    per_bs = 0.45 + 0.03 * slice_b
    if args.torch_compile:  # compiles inside the capture of every bs <= 32
        per_bs += 3.0 * sum(bs <= 32 for bs in args.graph_bs) / len(args.graph_bs)
    kind = "verify" if args.spec else "decode"
    decode = _capture(kind, args.graph_bs, per_bs, 4.0)
    if not args.piecewise:
        return [decode]
    tokens = args.piecewise_tokens
    if args.format == "0.5.23":  # the prefill graph runs before decode
        return [_capture("prefill", tokens, 0.3 + 0.01 * slice_b, 2.0), decode]
    piecewise = _capture("piecewise", tokens, 0.25, 2.4, compile_s=0.8 + 0.01 * slice_b)
    return [decode, piecewise]


def _draft_captures(args: ServerArgs) -> list[Capture]:
    if not args.cuda_graph or args.spec == "NGRAM":
        return []
    return [
        _capture("draft", args.graph_bs, 0.2, 1.5),
        _capture("draft_extend", args.graph_bs, 0.25, 1.0),
    ]


def _capture(
    kind: str, sizes: list[int], item_s: float, first_s: float, compile_s: float = 0.0
) -> Capture:
    return Capture(kind, sizes, item_s, first_s, compile_s, graph_gib(kind, len(sizes)), None)
