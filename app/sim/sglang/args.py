"""SGLang's command line -> the resolved arguments the simulated server runs with.

Parsing is argparse, as in SGLang: abbreviations work (`--tp` is `--tp-size`,
`--mem-fraction` is `--mem-fraction-static`), and a bad value prints usage and
exits 2. Only the flags that change the simulation are declared; any other flag
is accepted and kept, in order, in the server_args dump, because the simulator
cannot know all of SGLang's 500-odd flags. `--sim-*` flags drive the simulator
and never appear in the dump.

0.5.23 splits the CUDA-graph flags per phase (`--cuda-graph-max-bs-decode`,
`--cuda-graph-backend-prefill`); there the old `--cuda-graph-max-bs` is an
ambiguous abbreviation, and argparse rejects it exactly as the real server does.

Resolution fills the values the real server picks itself (memory fraction,
batch sizes, attention backend) and applies its silent overrides, such as
piecewise CUDA graphs switched off for a multimodal model: those show only as a
changed value in the dump, as they do in real logs.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass, field

from sgwatch.sim.common.gpustate import GpuSpec
from sgwatch.sim.common.model import ModelInfo, describe
from sgwatch.sim.common.run import Run, SimOptions, options, own_args
from sgwatch.sim.sglang import dump

FORMATS = ("0.4", "0.5", "0.5.23")
# What SGLang 0.5.x sets --max-running-requests to for speculative decoding, unless given.
_SPEC_MAX_RUNNING = 48
DEFAULT_FORMAT = "0.5"
SPEC_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM")
# SGLang's default capture list: 1, 2, 4, 8, 12, then steps of 8 to 256, 16 to 512.
_BS_LIST = [1, 2, 4, 8, 12, *range(16, 257, 8), *range(272, 513, 16)]
# The 50 token counts the piecewise graphs are captured for (up to 4096).
PIECEWISE_TOKENS = [
    *range(4, 33, 4),
    *range(48, 257, 16),
    *range(288, 513, 32),
    *range(640, 2049, 128),
    *range(2304, 4097, 256),
]


@dataclass(slots=True)
class ServerArgs(Run):
    """Everything the simulated SGLang run needs, resolved. Its `piecewise` is the
    piecewise graphs in 0.4/0.5, the prefill graph in 0.5.23."""

    format: str  # the release family whose log it writes (--sim-format)
    base_gpu_id: int
    mem_fraction_static: float
    mem_fraction_auto: bool
    max_prefill_tokens: int
    context_length: int
    attention_backend: str
    attention_auto: bool
    graph_bs: list[int]
    piecewise_tokens: list[int]
    spec_topk: int
    enable_metrics: bool
    log_level: str
    skip_warmup: bool
    invalid: str | None  # a validation error the server reports at startup
    dump: dict[str, object] = field(default_factory=dict)  # the server_args line
    launch_command: str = ""


def parse(argv: list[str]) -> ServerArgs:
    """Parse and resolve; argparse errors raise SystemExit(2) after printing usage."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--sim-format", choices=FORMATS, default=DEFAULT_FORMAT)
    fmt = pre.parse_known_args(argv)[0].sim_format
    parser = build_parser(fmt)
    ns, unknown = parser.parse_known_args(argv)
    return resolve(ns, unknown, argv, options(ns, parser))


def build_parser(fmt: str) -> argparse.ArgumentParser:
    prog = "sglang serve" if fmt == "0.5.23" else "launch_server.py"
    p = argparse.ArgumentParser(prog=prog)
    a = p.add_argument
    a("--model-path", "--model", required=True)
    a("--tokenizer-path")
    a("--served-model-name")
    a("--host", default="127.0.0.1")
    a("--port", type=int, default=30000)
    a("--tp-size", "--tensor-parallel-size", type=int, default=1)
    a("--base-gpu-id", type=int, default=0)
    a("--mem-fraction-static", type=float)
    a("--max-running-requests", type=int)
    a("--chunked-prefill-size", type=int)
    a("--context-length", type=int)
    a("--dtype", default="auto")
    a("--quantization")
    a("--attention-backend")
    a("--enable-torch-compile", action="store_true")
    a("--disable-cuda-graph", action="store_true")
    if fmt == "0.5.23":
        a("--cuda-graph-max-bs-decode", type=int)
        a("--cuda-graph-max-bs-prefill", type=int)
        a("--cuda-graph-backend-decode", choices=("full", "breakable", "disabled"))
        a("--cuda-graph-backend-prefill", choices=("full", "breakable", "disabled"))
        a("--disable-decode-cuda-graph", action="store_true")
        a("--disable-prefill-cuda-graph", action="store_true")
    else:
        a("--cuda-graph-max-bs", type=int)
        a("--cuda-graph-bs", type=int, nargs="+")
        a("--enable-piecewise-cuda-graph", action="store_true")
        a("--enforce-piecewise-cuda-graph", action="store_true")
        a("--disable-piecewise-cuda-graph", action="store_true")
        a("--piecewise-cuda-graph-max-tokens", type=int, default=4096)
        a("--piecewise-cuda-graph-tokens", type=int, nargs="+")
    a("--speculative-algorithm", choices=SPEC_ALGORITHMS)
    a("--speculative-draft-model-path")
    a("--speculative-num-steps", type=int)
    a("--speculative-eagle-topk", type=int)
    a("--speculative-num-draft-tokens", type=int)
    a("--language-only", action="store_true")
    a("--encoder-only", action="store_true")
    a("--encoder-urls", nargs="*", default=[])
    a("--enable-metrics", action="store_true")
    a("--decode-log-interval", type=int, default=40)
    a("--log-level", default="info")
    a("--skip-server-warmup", action="store_true")
    a("--random-seed", type=int)
    a("--sim-format", choices=FORMATS, default=DEFAULT_FORMAT, help="log format family")
    own_args(p)
    return p


def resolve(
    ns: argparse.Namespace, unknown: list[str], argv: list[str], sim: SimOptions
) -> ServerArgs:
    fmt = ns.sim_format
    gpu = GpuSpec.from_env()
    model = describe(ns.model_path, ns.quantization)
    tp = max(1, ns.tp_size)
    graphs_off = ns.disable_cuda_graph or (
        fmt == "0.5.23"
        and (ns.disable_decode_cuda_graph or ns.cuda_graph_backend_decode == "disabled")
    )
    max_bs = _max_bs(ns, fmt, tp)
    graph_bs = _graph_bs(ns, fmt, max_bs)
    piecewise, tokens, disable_piecewise = _piecewise(ns, fmt, model, graphs_off)
    spec = ns.speculative_algorithm
    steps = ns.speculative_num_steps or (3 if spec else 0)
    topk = ns.speculative_eagle_topk or (1 if spec else 0)
    draft_tokens = ns.speculative_num_draft_tokens or (steps + 1 if spec else 0)
    auto_mfs = ns.mem_fraction_static is None
    mfs = _auto_mem_fraction(gpu.mem_gib, max_bs, piecewise, spec, model.multimodal)
    mfs = mfs if auto_mfs else ns.mem_fraction_static
    backend = ns.attention_backend or ("flashinfer" if fmt == "0.4" else "fa3")
    chunked = ns.chunked_prefill_size or (8192 if gpu.mem_gib >= 60 else 2048)
    invalid = None
    if ns.language_only and not ns.encoder_urls:
        invalid = "requires at least one encoder urls to be set via --encoder-urls"
    args = ServerArgs(
        sim=sim,
        format=fmt,
        model=model,
        model_path=ns.model_path,
        served_model_name=ns.served_model_name or ns.model_path,
        host=ns.host,
        port=ns.port,
        tp=tp,
        base_gpu_id=ns.base_gpu_id,
        mem_fraction_static=round(mfs, 3),
        mem_fraction_auto=auto_mfs,
        max_running_requests=ns.max_running_requests or (_SPEC_MAX_RUNNING if spec else 2048),
        chunked_prefill_size=chunked,
        max_prefill_tokens=16384,
        context_length=ns.context_length or model.context_len,
        dtype="torch.float16" if ns.dtype in ("half", "float16") else "torch.bfloat16",
        attention_backend=backend,
        attention_auto=ns.attention_backend is None,
        cuda_graph=not graphs_off,
        graph_bs=graph_bs,
        piecewise=piecewise,
        piecewise_tokens=tokens,
        torch_compile=ns.enable_torch_compile,
        spec=spec,
        spec_steps=steps,
        spec_topk=topk,
        spec_draft_tokens=draft_tokens,
        enable_metrics=ns.enable_metrics,
        # SGLang 0.5.x turns the overlap scheduler off for speculative decoding (spec v1).
        overlap=spec is None or fmt == "0.5.23",
        decode_log_interval=max(1, ns.decode_log_interval),
        log_level=ns.log_level.lower(),
        skip_warmup=ns.skip_server_warmup,
        invalid=invalid,
        launch_command=shlex.join(getattr(sys, "orig_argv", None) or [sys.executable, *argv]),
    )
    args.dump = dump.build(ns, args, max_bs, disable_piecewise, unknown)
    return args


def _max_bs(ns: argparse.Namespace, fmt: str, tp: int) -> int:
    given = ns.cuda_graph_max_bs_decode if fmt == "0.5.23" else ns.cuda_graph_max_bs
    return given or (256 if tp >= 2 else 160)


def _graph_bs(ns: argparse.Namespace, fmt: str, max_bs: int) -> list[int]:
    if fmt != "0.5.23" and ns.cuda_graph_bs:
        return sorted(set(ns.cuda_graph_bs))
    out = [bs for bs in _BS_LIST if bs <= max_bs]
    if not out or out[-1] != max_bs:
        out.append(max_bs)
    return out


def _piecewise(
    ns: argparse.Namespace, fmt: str, model: ModelInfo, graphs_off: bool
) -> tuple[bool, list[int], bool]:
    """(capture it, token counts, the disable flag the dump shows)."""
    if fmt == "0.5.23":  # the prefill graph: on by default, off for multimodal models
        off = (
            graphs_off
            or ns.disable_prefill_cuda_graph
            or ns.cuda_graph_backend_prefill == "disabled"
            or (model.multimodal and ns.cuda_graph_backend_prefill is None)
        )
        limit = ns.cuda_graph_max_bs_prefill or 4096
        return not off, [t for t in PIECEWISE_TOKENS if t <= limit], off
    if fmt == "0.4":
        return False, [], True
    tokens = sorted(set(ns.piecewise_cuda_graph_tokens or PIECEWISE_TOKENS))
    tokens = [t for t in tokens if t <= ns.piecewise_cuda_graph_max_tokens]
    if ns.enforce_piecewise_cuda_graph:  # enforce skips every auto-disable rule
        disabled = False
    else:
        disabled = ns.disable_piecewise_cuda_graph or model.multimodal or ns.enable_torch_compile
    wanted = ns.enforce_piecewise_cuda_graph or ns.enable_piecewise_cuda_graph
    return wanted and not disabled and not graphs_off, tokens, disabled


def _auto_mem_fraction(
    total_gib: float, max_bs: int, piecewise: bool, spec: str | None, multimodal: bool
) -> float:
    reserved = 2.5 + 0.02 * max_bs + (1.5 if piecewise else 0.0) + (1.5 if spec else 0.0)
    mfs = 1 - reserved / total_gib
    return mfs * 0.95 if multimodal else mfs
