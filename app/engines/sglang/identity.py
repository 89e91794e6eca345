"""The run's identity (core/identity.py) from SGLang's `server_args` dump, and the
model a launch command asks for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sgwatch.core.cmdline import LaunchCommand, value_of
from sgwatch.core.identity import RunIdentity, Speculative, as_int, as_str

_MODEL = ("--model-path", "--model")


def identity(args: Mapping[str, Any]) -> RunIdentity:
    algorithm = as_str(args.get("speculative_algorithm"))
    return RunIdentity(
        model=as_str(args.get("model_path")),
        tp=as_int(args.get("tp_size")),
        pp=as_int(args.get("pp_size")),
        dp=as_int(args.get("dp_size")),
        ep=as_int(args.get("ep_size")),
        speculative=None
        if algorithm is None
        else Speculative(
            algorithm,
            as_int(args.get("speculative_num_steps")),
            as_int(args.get("speculative_num_draft_tokens")),
            as_str(args.get("speculative_draft_model_path")),
        ),
        node_rank=as_int(args.get("node_rank")),
        nnodes=as_int(args.get("nnodes")),
    )


def model_of(cmd: LaunchCommand) -> str | None:
    """`sglang serve MODEL`, or --model-path (--model) MODEL."""
    if cmd.program[-1:] == ("serve",) and cmd.positional:
        return cmd.positional[0]
    return next((v for name in _MODEL if isinstance(v := value_of(cmd, name), str)), None)
