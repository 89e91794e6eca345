"""The `server_args=` dump: resolved values in ServerArgs order, then unknown flags.

SGLang logs its resolved arguments once, and automatic decisions show only
there (docs/design/log-formats.md), so the dump carries the resolved values, not the
ones typed. It is a subset of SGLang's ~300 fields, in their order; a flag the
simulator does not model is appended as given (`--foo-bar 3` -> foo_bar=3,
a bare `--flag` -> True), or overrides the field of the same name.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sgwatch.sim.sglang.args import ServerArgs


def build(
    ns: argparse.Namespace,
    a: ServerArgs,
    max_bs: int,
    disable_piecewise: bool,
    unknown: list[str],
) -> dict[str, object]:
    d: dict[str, object] = {
        "model_path": a.model_path,
        "tokenizer_path": ns.tokenizer_path or a.model_path,
        "tokenizer_mode": "auto",
        "skip_tokenizer_init": False,
        "load_format": "auto",
        "trust_remote_code": False,
        "dtype": ns.dtype,
        "kv_cache_dtype": "auto",
        "quantization": ns.quantization,
        "context_length": ns.context_length,
        "device": "cuda",
        "served_model_name": a.served_model_name,
        "chat_template": None,
        "is_embedding": False,
        "revision": None,
        "host": a.host,
        "port": a.port,
        "mem_fraction_static": a.mem_fraction_static,
        "max_running_requests": a.max_running_requests if a.spec else ns.max_running_requests,
        "max_total_tokens": None,
        "chunked_prefill_size": a.chunked_prefill_size,
        "max_prefill_tokens": a.max_prefill_tokens,
        "schedule_policy": "fcfs",
        "schedule_conservativeness": 1.0,
        "page_size": 1,
        "tp_size": a.tp,
        "pp_size": 1,
        "stream_interval": 1,
        "random_seed": ns.random_seed if ns.random_seed is not None else a.sim.seed % 10**9,
        "watchdog_timeout": 300,
        "log_level": ns.log_level,
        "log_requests": False,
        "enable_metrics": a.enable_metrics,
        "decode_log_interval": a.decode_log_interval,
        "api_key": None,
        "dp_size": 1,
        "load_balance_method": "round_robin",
        "attention_backend": a.attention_backend,
        "sampling_backend": "flashinfer",
        "grammar_backend": "xgrammar",
        "speculative_algorithm": a.spec,
        "speculative_draft_model_path": ns.speculative_draft_model_path,
        "speculative_num_steps": a.spec_steps or None,
        "speculative_eagle_topk": a.spec_topk or None,
        "speculative_num_draft_tokens": a.spec_draft_tokens or None,
        "disable_radix_cache": False,
        "disable_overlap_schedule": not a.overlap,
        "enable_torch_compile": a.torch_compile,
        "torch_compile_max_bs": 32,
    }
    if a.format == "0.5.23":
        d |= {
            "cuda_graph_backend_decode": "disabled" if not a.cuda_graph else "full",
            "cuda_graph_backend_prefill": "disabled" if disable_piecewise else "breakable",
            "cuda_graph_max_bs_decode": max_bs,
            "cuda_graph_max_bs_prefill": max(a.piecewise_tokens, default=4096),
            "disable_cuda_graph_padding": False,
        }
    else:
        d |= {
            "disable_cuda_graph": ns.disable_cuda_graph,
            "disable_cuda_graph_padding": False,
            "cuda_graph_max_bs": max_bs,
            "cuda_graph_bs": ns.cuda_graph_bs,
        }
    if a.format == "0.5":
        d |= {
            "enable_piecewise_cuda_graph": ns.enable_piecewise_cuda_graph,
            "enforce_piecewise_cuda_graph": ns.enforce_piecewise_cuda_graph,
            "disable_piecewise_cuda_graph": disable_piecewise,
            "piecewise_cuda_graph_max_tokens": ns.piecewise_cuda_graph_max_tokens,
            "piecewise_cuda_graph_tokens": a.piecewise_tokens,
        }
    d |= {
        "base_gpu_id": a.base_gpu_id,
        "gpu_id_step": 1,
        "skip_server_warmup": a.skip_warmup,
        "encoder_only": ns.encoder_only,
        "language_only": ns.language_only,
        "encoder_transfer_backend": "zmq_to_scheduler",
        "encoder_urls": ns.encoder_urls,
    }
    d.update(_extras(unknown))
    return d


def _extras(unknown: list[str]) -> dict[str, object]:
    """Unknown `--flag [values...]` pairs -> dump entries (`--flag` alone is True)."""
    out: dict[str, object] = {}
    key: str | None = None
    for token in unknown:
        if token.startswith("--"):
            name, eq, value = token[2:].partition("=")
            key = name.replace("-", "_")
            out[key] = _typed(value) if eq else True
            if eq:
                key = None
        elif key is not None:
            prev = out[key]
            if prev is True:
                out[key] = _typed(token)
            elif isinstance(prev, list):
                prev.append(_typed(token))
            else:
                out[key] = [prev, _typed(token)]
    return out


def _typed(text: str) -> object:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
