"""What SGLang changed on its own that costs speed, why, and the flag that prevents it.

SGLang resolves its arguments once and logs the result (the `server_args` dump);
some of its decisions turn off a speed feature without a word (0.5.x
`ServerArgs._handle_piecewise_cuda_graph` disables piecewise CUDA graphs for a
multimodal architecture and logs nothing), others warn (`Overlap scheduler is
disabled because of using eagle speculative decoding.`; the parser keeps such
lines under OVERRIDDEN). Each rule below reads the resolved settings (and the
model's architecture from `Load weight end. type=...`) for the reason SGLang's
own rules give, falling back to the server's words; a setting the command asked
for is the user's choice, not news. The rules are SGLang's (docs/design/log-formats.md,
"Resolved arguments and the server's own decisions").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sgwatch.core import events as ev
from sgwatch.core.cmdline import MISSING, LaunchCommand
from sgwatch.core.state import OVERRIDDEN
from sgwatch.engines import overrides
from sgwatch.engines.shapes.differences import Difference

_EAGLE_FAMILY = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE")
# SGLang's multimodal classes are its *ForConditionalGeneration models, plus a few.
_MULTIMODAL_SUFFIXES = ("ForConditionalGeneration", "VLForCausalLM")
_MULTIMODAL_NAMES = ("Llava", "MiniCPMV", "MiniCPMO", "Qwen2VL", "InternVL", "DeepseekVL")
SPEC_MAX_RUNNING = 48  # what speculative decoding sets --max-running-requests to


def multimodal(arch: str | None) -> bool:
    return arch is not None and (
        arch.endswith(_MULTIMODAL_SUFFIXES) or arch.startswith(_MULTIMODAL_NAMES)
    )


def _on(args: Mapping[str, Any], key: str) -> bool:
    return args.get(key) not in (None, False, 0, "", "none", "null", [])


def _piecewise_why(args: Mapping[str, Any], arch: str | None) -> str | None:
    """0.5.x `_handle_piecewise_cuda_graph`: the first rules that hold."""
    found = []
    if multimodal(arch):
        found.append(f"{arch} is multimodal")
    if _on(args, "enable_dp_attention"):
        found.append("DP attention is on")
    if _on(args, "enable_torch_compile"):
        found.append("--enable-torch-compile is on")
    if isinstance(args.get("pp_size"), int) and args["pp_size"] > 1:
        found.append(f"pipeline parallel (PP {args['pp_size']})")
    if _on(args, "enable_lora") or _on(args, "lora_paths"):
        found.append("LoRA is on")
    if _on(args, "moe_a2a_backend"):
        found.append(f"the MoE all-to-all backend {args['moe_a2a_backend']}")
    if args.get("quantization") == "gguf" or args.get("load_format") == "gguf":
        found.append("a GGUF model")
    if _on(args, "enable_hierarchical_cache") or _on(args, "cpu_offload_gb"):
        found.append("KV or weight offload to the CPU")
    if _on(args, "enable_deterministic_inference"):
        found.append("deterministic inference")
    if _on(args, "disaggregation_mode"):
        found.append("PD disaggregation")
    if not found and arch is None:
        return "its own rules (no flag explains it: likely a multimodal architecture)"
    return "; ".join(found) or None


def _prefill_why(args: Mapping[str, Any], arch: str | None) -> str | None:
    """0.5.23's breakable prefill graph refuses multimodal models and a few setups."""
    if multimodal(arch):
        return f"{arch} is multimodal"
    if _on(args, "enable_two_batch_overlap"):
        return "two-batch overlap is on"
    if isinstance(args.get("dcp_size"), int) and args["dcp_size"] > 1:
        return f"decode context parallel (DCP {args['dcp_size']})"
    if args.get("disaggregation_mode") == "decode":
        return "a PD decode server"
    return None


def _graphs_why(args: Mapping[str, Any], arch: str | None) -> str | None:
    if args.get("disaggregation_mode") == "prefill":
        return "a PD prefill server"
    if args.get("attention_backend") in ("torch_native", "flex_attention"):
        return f"the {args['attention_backend']} attention backend"
    if args.get("moe_a2a_backend") == "deepep" and args.get("deepep_mode") == "normal":
        return "DeepEP normal mode"
    return None


def _overlap_why(args: Mapping[str, Any], arch: str | None) -> str | None:
    spec = args.get("speculative_algorithm")
    if spec in _EAGLE_FAMILY:
        return f"{spec} speculative decoding (spec v1)"
    if spec == "NGRAM":
        return "ngram speculative decoding"
    if isinstance(args.get("pp_size"), int) and args["pp_size"] > 1:
        return f"pipeline parallel (PP {args['pp_size']})"
    return None


def _max_running_why(args: Mapping[str, Any], arch: str | None) -> str | None:
    if args.get("speculative_algorithm"):
        return "speculative decoding"
    return None


@dataclass(frozen=True, slots=True)
class _Rule:
    setting: str
    effect: str  # what the change means for speed, in a few words
    changed: Callable[[Any, Mapping[str, Any]], bool]  # the value is the costly one
    why: Callable[[Mapping[str, Any], str | None], str | None]
    override: str | None


_RULES = (
    _Rule(
        "disable_piecewise_cuda_graph",
        "piecewise CUDA graphs off (prefill, extend)",
        lambda v, a: v is True and not a.get("enforce_piecewise_cuda_graph"),
        _piecewise_why,
        "--enforce-piecewise-cuda-graph",
    ),
    _Rule(
        "cuda_graph_backend_prefill",
        "prefill CUDA graph off",
        lambda v, a: v == "disabled",
        _prefill_why,
        "--cuda-graph-backend-prefill breakable",
    ),
    _Rule(
        "disable_cuda_graph",
        "CUDA graphs off (every step launches its kernels)",
        lambda v, a: v is True,
        _graphs_why,
        None,
    ),
    _Rule(
        "disable_overlap_schedule",
        "overlap scheduler off (the GPU waits on the CPU)",
        lambda v, a: v is True,
        _overlap_why,
        "SGLANG_ENABLE_SPEC_V2=1 (environment)",
    ),
    _Rule(
        "max_running_requests",
        f"at most {SPEC_MAX_RUNNING} requests at once",
        lambda v, a: v == SPEC_MAX_RUNNING and bool(a.get("speculative_algorithm")),
        _max_running_why,
        "--max-running-requests",
    ),
    _Rule(  # a figure the server picks anyway: news only when it says it lowered it
        "mem_fraction_static",
        "less memory for the KV cache (fewer tokens, smaller batches)",
        lambda v, a: "mem_fraction_static" in a.get(OVERRIDDEN, {}),
        lambda a, arch: None,
        "--mem-fraction-static",
    ),
    _Rule(
        "chunked_prefill_size",
        "chunked prefill off",
        lambda v, a: v == -1,
        lambda a, arch: None,
        "--chunked-prefill-size",
    ),
)
SPEED_SETTINGS = frozenset(r.setting for r in _RULES)


def _asked(cmd: LaunchCommand | None) -> set[str] | None:
    """The settings the command names (flag spelling; None: the command is unknown)."""
    if cmd is None:
        return None
    return {f.name.lstrip("-").replace("-", "_") for f in cmd.flags}


def speed_changes(
    resolved: Mapping[str, Any], cmd: LaunchCommand | None, arch: str | None
) -> list[Difference]:
    """What the server changed on its own that affects speed, with why and the override.

    `cmd` None (a log read alone): a change no rule and no log line explains may be
    the user's own flag, so it is left out."""
    asked = _asked(cmd)
    logged: Mapping[str, tuple[Any, str]] = resolved.get(OVERRIDDEN, {})
    out = []
    for rule in _RULES:
        value = resolved.get(rule.setting, MISSING)
        if value is MISSING or not rule.changed(value, resolved):
            continue
        if asked is not None and rule.setting in asked:
            continue  # the command asked for it
        said_why = logged[rule.setting][1] if rule.setting in logged else ""
        why = rule.why(resolved, arch) or said_why
        if not why:
            if asked is None:
                continue
            why = "the server's own rules (it logged no reason)"
        out.append(
            Difference(
                rule.setting,
                "--" + rule.setting.replace("_", "-"),
                value,
                MISSING,
                None,
                "auto",
                "",
                why,
                rule.effect,
                rule.override,
                True,
            )
        )
    return out


def ruled_out_phases(resolved: Mapping[str, Any]) -> frozenset[str]:
    """Warmup phases the resolved settings say will not happen (nothing when unknown)."""
    if not resolved:
        return frozenset()
    out = set()
    graphs_off = resolved.get("disable_cuda_graph") is True or (
        resolved.get("cuda_graph_backend_decode") == "disabled"
        and resolved.get("cuda_graph_backend_prefill") == "disabled"
    )
    if graphs_off:
        out.add(ev.CAPTURING_GRAPHS)
    if resolved.get("enable_torch_compile") is True:
        return frozenset(out)  # torch.compile shows as compiling inside decode capture
    if "cuda_graph_backend_prefill" in resolved:  # 0.5.23: only tc_piecewise compiles
        piecewise = resolved["cuda_graph_backend_prefill"] == "tc_piecewise"
    else:  # 0.5.x: enforce beats every rule; an unforced run compiles when asked and allowed
        piecewise = resolved.get("enforce_piecewise_cuda_graph") is True or (
            resolved.get("disable_piecewise_cuda_graph") is not True
            and resolved.get("enable_piecewise_cuda_graph") is True
        )
    if graphs_off or not piecewise:
        out.add(ev.COMPILING)
    return frozenset(out)


# SGLang's warnings about a setting it changed (engines/overrides.py rows). Matched
# against a log record's message (docs/design/log-formats.md lists them).
_SAID = (
    (r"[Oo]verlap scheduler (?:is|and .* are) disabled", "disable_overlap_schedule", True),
    (r"^Max running requests is reset to (\d+)", "max_running_requests", 1),
    (r"^Disable piecewise CUDA graph because", "disable_piecewise_cuda_graph", True),
    (r"^Cuda graph is disabled", "disable_cuda_graph", True),
    (r"disabling prefill CUDA graph", "cuda_graph_backend_prefill", "disabled"),
    (r"^Disable prefill CUDA graph because", "cuda_graph_backend_prefill", "disabled"),
    (r"reduce --mem-fraction-static to (\d+(?:\.\d+)?)", "mem_fraction_static", 1),
)  # fmt: skip
_SAID_NEEDLES = ("disable", "reset to", "reduce --mem-fraction")
_SERVER_ARGS_LOGGER = "WARNING:sglang.srt.server_args:"  # before logging is configured


def said(message: str, ts: str | None) -> ev.Overridden | None:
    """The event for a warning in which SGLang says it changed a setting, else None."""
    if message.startswith(_SERVER_ARGS_LOGGER):
        message = message[len(_SERVER_ARGS_LOGGER) :]
    if not any(n in message for n in _SAID_NEEDLES):
        return None
    return overrides.said(_SAID, message, ts)
