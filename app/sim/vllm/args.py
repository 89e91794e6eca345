"""`vllm serve MODEL [flags]` -> the resolved arguments the simulated vLLM server runs with.

Parsing follows vLLM's FlexibleArgumentParser where a user notices it: `_` and
`-` are interchangeable in flag names, booleans take `--X` / `--no-X`, JSON
flags accept dotted forms (`--compilation-config.cudagraph_mode=FULL` merges
into `--compilation-config`), and an unknown flag is an argparse error (the
top-level parser's usage, `vllm: error: unrecognized arguments: ...`, exit 2). Only the flags that
change the simulation are declared; any other flag the bundled vLLM catalog
knows is accepted and shown in `non-default args`.

The result carries the engine-neutral settings (`run`, common/run.py) that the
scheduler and HTTP layer shared with the simulated SGLang read.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field

from sgwatch.sim.common.gpustate import GpuSpec
from sgwatch.sim.common.model import ModelInfo, describe
from sgwatch.sim.common.run import Run, SimOptions, options, own_args
from sgwatch.sim.vllm.flags import known

PROG = "vllm serve"
USAGE = "vllm serve [model_tag] [options]"
# Unrecognised arguments are refused by the top-level `vllm` parser, with its usage.
TOP_USAGE = "usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ..."
CUDAGRAPH_MODES = ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
# --speculative-config's method -> the simulator's acceptance model.
SPEC_METHODS = {
    "eagle": "EAGLE",
    "eagle3": "EAGLE3",
    "mtp": "NEXTN",
    "deepseek_mtp": "NEXTN",
    "qwen3_next_mtp": "NEXTN",
    "ngram": "NGRAM",
    "draft_model": "STANDALONE",
}
_JSON_FLAGS = ("--compilation-config", "--speculative-config")


@dataclass(slots=True)
class VllmArgs:
    """Everything a simulated `vllm serve` needs, resolved."""

    run: Run  # what the shared scheduler and HTTP layer read
    gpu_memory_utilization: float
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    enforce_eager: bool
    cudagraph_mode: str  # as the engine resolves it
    capture_sizes: list[int]  # piecewise graphs (mixed prefill-decode)
    full_sizes: list[int]  # full graphs (decode), <= max_num_seqs
    spec_method: str | None
    num_spec_tokens: int
    log_stats: bool
    non_default: dict[str, object] = field(default_factory=dict)

    @property
    def model(self) -> ModelInfo:
        return self.run.model

    @property
    def tp(self) -> int:
        return self.run.tp

    @property
    def piecewise(self) -> bool:
        return self.cudagraph_mode in ("PIECEWISE", "FULL_AND_PIECEWISE")

    @property
    def full(self) -> bool:
        return self.cudagraph_mode in ("FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own wording and status
        self.print_usage(sys.stderr)
        self.exit(2, f"{PROG}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, usage=USAGE, allow_abbrev=False)
    a = p.add_argument
    a("model_tag", nargs="?")
    a("--model")
    a("--served-model-name", nargs="+")
    a("--host")
    a("--port", type=int, default=8000)
    a("--tensor-parallel-size", "-tp", type=int, default=1)
    a("--gpu-memory-utilization", type=float, default=0.9)
    a("--max-model-len", type=int)
    a("--max-num-seqs", type=int)
    a("--max-num-batched-tokens", type=int)
    a("--dtype", default="auto")
    a("--quantization", "-q")
    a("--enforce-eager", action=argparse.BooleanOptionalAction, default=False)
    a("--compilation-config", "-O", type=json.loads, default=None)
    a("--cuda-graph-sizes", type=int, nargs="+")  # one: the largest size; several: the list
    a("--speculative-config", type=json.loads, default=None)
    a("--disable-log-stats", action="store_true")
    a("--enable-prefix-caching", action=argparse.BooleanOptionalAction, default=None)
    a("--seed", type=int)
    own_args(p)
    return p


def parse(argv: list[str]) -> VllmArgs:
    """Parse and resolve `argv` (what follows `vllm serve`); argparse errors exit 2."""
    parser = build_parser()
    ns, unknown = parser.parse_known_args(normalise(argv))
    extra = _other_flags(unknown, parser)
    model = ns.model or ns.model_tag
    if not model:
        parser.error("the following arguments are required: model_tag")
    return resolve(ns, model, extra, options(ns, parser))


def normalise(argv: list[str]) -> list[str]:
    """`--a_b` is `--a-b`; `--json-flag.key=value` pieces merge into one JSON value."""
    out: list[str] = []
    merged: dict[str, dict] = {}
    i = 0
    while i < len(argv):
        tok = argv[i]
        i += 1
        if not tok.startswith("--"):
            out.append(tok)
            continue
        name, eq, value = tok.partition("=")
        head, dot, key = name.partition(".")
        head = "--" + head[2:].replace("_", "-")
        if dot and head in _JSON_FLAGS:
            if not eq and i < len(argv):
                value, i = argv[i], i + 1
            merged.setdefault(head, {})[key.replace("-", "_")] = _scalar(value)
            continue
        if head in _JSON_FLAGS and head in merged:  # a whole value and dotted keys
            if not eq and i < len(argv):
                value, i = argv[i], i + 1
            merged[head] = {**json.loads(value), **merged[head]}
            continue
        out.append(f"{head}={value}" if eq else head)
    for head, doc in merged.items():
        out += [head, json.dumps(doc)]
    return out


def _scalar(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _other_flags(unknown: list[str], parser: argparse.ArgumentParser) -> dict[str, object]:
    """Flags the simulation does not model: those vLLM has are kept, others refused."""
    out: dict[str, object] = {}
    refused: list[str] = []
    i = 0
    while i < len(unknown):
        tok = unknown[i]
        i += 1
        name, eq, value = tok.partition("=")
        takes = known(name)
        if takes is None:
            refused.append(tok)
            continue
        if takes and not eq and i < len(unknown) and not unknown[i].startswith("--"):
            value, i = unknown[i], i + 1
        dest = name.removeprefix("--").removeprefix("no-").replace("-", "_")
        out[dest] = _scalar(value) if takes else not name.startswith("--no-")
    if refused:
        print(TOP_USAGE, file=sys.stderr)
        parser.exit(2, f"vllm: error: unrecognized arguments: {' '.join(refused)}\n")
    return out


def resolve(
    ns: argparse.Namespace, model_path: str, extra: dict[str, object], sim: SimOptions
) -> VllmArgs:
    gpu = GpuSpec.from_env()
    model = describe(model_path, ns.quantization)
    tp = max(1, ns.tensor_parallel_size)
    cc = dict(ns.compilation_config or {})
    spec_cfg = dict(ns.speculative_config or {})
    spec_method = spec_cfg.get("method") if spec_cfg else None
    spec = SPEC_METHODS.get(str(spec_method), "STANDALONE") if spec_method else None
    k = int(spec_cfg.get("num_speculative_tokens", 1 if spec_method else 0) or 0)
    mode = str(cc.get("cudagraph_mode", "FULL_AND_PIECEWISE")).upper()
    if mode not in CUDAGRAPH_MODES:
        mode = "FULL_AND_PIECEWISE"
    if ns.enforce_eager:
        mode = "NONE"
    max_seqs = ns.max_num_seqs or (1024 if gpu.mem_gib >= 70 else 256)  # the API server's
    given = ns.cuda_graph_sizes or []
    sizes = sorted(set(cc.get("cudagraph_capture_sizes") or (given if len(given) > 1 else [])))
    sizes = sizes or capture_sizes(given[0] if len(given) == 1 else min(max_seqs * 2, 512))
    max_len = ns.max_model_len or model.context_len
    batched = ns.max_num_batched_tokens or (8192 if gpu.mem_gib >= 60 else 2048)
    served = (ns.served_model_name or [model_path])[0]
    run = Run(
        sim=sim,
        model=model,
        model_path=model_path,
        served_model_name=served,
        host=ns.host or "0.0.0.0",
        port=ns.port,
        tp=tp,
        dtype="torch.float16" if ns.dtype in ("half", "float16") else "torch.bfloat16",
        max_running_requests=max_seqs,
        chunked_prefill_size=batched,
        cuda_graph=mode != "NONE",
        piecewise=False,  # prefill batches are costed without graph replay
        torch_compile=not ns.enforce_eager,
        spec=spec,
        spec_steps=k,
        spec_draft_tokens=k + 1 if spec else 0,
        overlap=spec is None,  # CPU time between steps is charged with speculative decoding
        decode_log_interval=1 << 30,  # vLLM logs no per-batch lines
    )
    args = VllmArgs(
        run=run,
        gpu_memory_utilization=ns.gpu_memory_utilization,
        max_model_len=max_len,
        max_num_seqs=max_seqs,
        max_num_batched_tokens=batched,
        enforce_eager=ns.enforce_eager,
        cudagraph_mode=mode,
        capture_sizes=sizes,
        full_sizes=[s for s in sizes if s <= max_seqs],
        spec_method=str(spec_method) if spec_method else None,
        num_spec_tokens=k,
        log_stats=not ns.disable_log_stats,
    )
    args.non_default = _non_default(ns, model_path, extra)
    return args


def capture_sizes(largest: int) -> list[int]:
    """vLLM's default capture list: 1, 2, 4, then multiples of 8 up to `largest`."""
    return [1, 2, 4, *range(8, largest + 1, 8)]


def _non_default(ns: argparse.Namespace, model: str, extra: dict[str, object]) -> dict:
    """What `non-default args: {...}` shows: the flags given, by dest, in vLLM's order."""
    out: dict[str, object] = {}
    if ns.model_tag:
        out["model_tag"] = ns.model_tag
    for dest, default in (
        ("host", None),
        ("port", 8000),
    ):
        if getattr(ns, dest) != default:
            out[dest] = getattr(ns, dest)
    out["model"] = model
    for dest, default in (
        ("served_model_name", None),
        ("dtype", "auto"),
        ("max_model_len", None),
        ("quantization", None),
        ("enforce_eager", False),
        ("tensor_parallel_size", 1),
        ("gpu_memory_utilization", 0.9),
        ("enable_prefix_caching", None),
        ("max_num_batched_tokens", None),
        ("max_num_seqs", None),
        ("speculative_config", None),
        ("compilation_config", None),
        ("disable_log_stats", False),
        ("seed", None),
    ):
        if getattr(ns, dest) != default:
            out[dest] = getattr(ns, dest)
    if ns.cuda_graph_sizes:
        out["cuda_graph_sizes"] = ns.cuda_graph_sizes
    return {**out, **extra}
