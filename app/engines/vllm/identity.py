"""The run's identity (core/identity.py) from vLLM's logged settings: what was asked
(`non-default args`), the engine config's model and parallel sizes, the release;
and the model a launch command asks for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sgwatch.core.cmdline import LaunchCommand, value_of
from sgwatch.core.identity import RunIdentity, Speculative, as_int, as_str
from sgwatch.engines.vllm.nodes import node_count


def identity(args: Mapping[str, Any], release: str | None) -> RunIdentity:
    node = node_count(args)
    return RunIdentity(
        model=as_str(args.get("model")),
        tp=as_int(args.get("tensor_parallel_size")),
        pp=as_int(args.get("pipeline_parallel_size")),
        dp=as_int(args.get("data_parallel_size")),
        speculative=_speculative(args),
        node_rank=node[0] if node else None,
        nnodes=node[1] if node else None,
        release=release,
    )


def _speculative(args: Mapping[str, Any]) -> Speculative | None:
    config = args.get("speculative_config")
    if isinstance(config, dict):  # --speculative-config '{"method": ..., ...}'
        model = as_str(config.get("model"))
        tokens = as_int(config.get("num_speculative_tokens"))
        method = as_str(config.get("method"))
    else:  # V0's own flags
        model = as_str(args.get("speculative_model"))
        tokens = as_int(args.get("num_speculative_tokens"))
        method = "ngram" if model == "[ngram]" else None
        model = None if method else model
    algorithm = method or ("draft_model" if model else None)
    if algorithm is None:
        return None
    # A draft pass per speculative token (n-grams need none); the target verifies them
    # and the token before them at once.
    steps = None if algorithm == "ngram" else tokens
    return Speculative(algorithm, steps, None if tokens is None else tokens + 1, model)


def model_of(cmd: LaunchCommand) -> str | None:
    """`vllm serve MODEL`, or --model MODEL (V0's api_server)."""
    if cmd.program[-1:] == ("serve",) and cmd.positional:
        return cmd.positional[0]
    model = value_of(cmd, "--model")
    return model if isinstance(model, str) else None
