"""What the simulator guesses about a model from its path: size, class, kind.

No weights exist, so the name is all there is: "Qwen/Qwen3-30B-A3B" is a 30 B
mixture-of-experts, "Qwen/Qwen3-VL-8B-Instruct" is multimodal. Size drives the
timing (weights, capture) and the memory plan; the architecture class is what
"Load weight end. type=..." prints; multimodal drives the graph auto-disable.
Qwen3.5 and Qwen3.6 ship as one multimodal class (`Qwen3_5ForConditionalGeneration`,
text-only checkpoints included), which is why SGLang turns their piecewise CUDA
graphs off; their NEXTN draft is the MTP head, `Qwen3_5ForCausalLMMTP`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

SHARD_GB = 4.6  # safetensors shard size of a typical HF checkpoint

_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[bB](?![a-zA-Z0-9])")
_MOE = re.compile(r"-a\d+(?:\.\d+)?b\b|mixtral|moe|deepseek-v[23]|deepseek-r1|gpt-oss|kimi-k")
_MULTIMODAL = re.compile(r"-vl\b|vl-|vision|llava|omni|gemma-3|llama-4|pixtral|internvl")
# Known families without a size in the name: (pattern, billions of parameters).
_KNOWN_SIZES = ((r"deepseek-(?:v3|r1)", 671.0), (r"kimi-k2", 1000.0))
_DEFAULT_B = 8.0
# Default context length by family (a name that matches none gets 32768).
_CONTEXT = ((r"llama-[34]", 131072), (r"deepseek", 163840), (r"qwen3\.", 262144), (r"qwen3", 40960))
# (name pattern, architecture class), first match wins.
_ARCHES = (
    (r"deepseek-(?:v3|r1)", "DeepseekV3ForCausalLM"),
    (r"qwen3\.[56].*-a\d+b", "Qwen3_5MoeForConditionalGeneration"),
    (r"qwen3\.[56]", "Qwen3_5ForConditionalGeneration"),
    (r"qwen3.*-vl|qwen3-vl", "Qwen3VLForConditionalGeneration"),
    (r"qwen2\.5-vl", "Qwen2_5_VLForConditionalGeneration"),
    (r"qwen3.*-a\d+b", "Qwen3MoeForCausalLM"),
    (r"qwen3", "Qwen3ForCausalLM"),
    (r"qwen", "Qwen2ForCausalLM"),
    (r"gemma-3", "Gemma3ForConditionalGeneration"),
    (r"gemma", "Gemma2ForCausalLM"),
    (r"llama-4", "Llama4ForConditionalGeneration"),
    (r"mixtral", "MixtralForCausalLM"),
    (r"gpt-oss", "GptOssForCausalLM"),
    (r"llava", "LlavaLlamaForCausalLM"),
)
# The class a NEXTN (MTP) draft loads as: "Load weight end. type=..." of the draft.
_NEXTN_ARCHES = {
    "DeepseekV3ForCausalLM": "DeepseekV3ForCausalLMNextN",
    "Qwen3_5ForConditionalGeneration": "Qwen3_5ForCausalLMMTP",
    "Qwen3_5MoeForConditionalGeneration": "Qwen3_5MoeForCausalLMMTP",
}


@dataclass(frozen=True, slots=True)
class ModelInfo:
    path: str
    params_b: float  # billions of parameters (all experts for MoE)
    arch: str
    moe: bool
    multimodal: bool
    bytes_per_param: float
    layers: int
    context_len: int

    @property
    def nextn_arch(self) -> str:
        return _NEXTN_ARCHES.get(self.arch, self.arch)

    @property
    def weights_gib(self) -> float:
        return self.params_b * 1e9 * self.bytes_per_param / 2**30

    def kv_bytes_per_token(self, tp: int) -> float:
        """K+V bytes one token takes on one rank (GQA with 8 KV heads of 128)."""
        heads_per_rank = max(1, 8 // tp)
        return 2 * self.layers * heads_per_rank * 128 * 2


def describe(path: str, quantization: str | None = None) -> ModelInfo:
    name = path.rstrip("/").rsplit("/", 1)[-1].lower()
    params = _size(name)
    arch = next((a for pat, a in _ARCHES if re.search(pat, name)), "LlamaForCausalLM")
    quant = (quantization or "").lower()
    if "fp8" in name or quant in ("fp8", "w8a8_fp8", "modelopt_fp8") or "deepseek-v3" in name:
        width = 1.0
    elif any(q in name or q == quant for q in ("awq", "gptq", "int4", "mxfp4", "nvfp4")):
        width = 0.5
    else:
        width = 2.0
    return ModelInfo(
        path=path,
        params_b=params,
        arch=arch,
        moe=bool(_MOE.search(name)),
        # SGLang counts every *ForConditionalGeneration class as multimodal.
        multimodal=bool(_MULTIMODAL.search(name)) or arch.endswith("ForConditionalGeneration"),
        bytes_per_param=width,
        layers=max(16, min(128, round(24 + params**0.5 * 6))),
        context_len=next((n for pat, n in _CONTEXT if re.search(pat, name)), 32768),
    )


def shards(weights_gib: float) -> int:
    """How many safetensors files a checkpoint of that size ships as (the loaders' bars
    count them)."""
    return max(1, math.ceil(weights_gib * 1.074 / SHARD_GB))


def _size(name: str) -> float:
    for pattern, size in _KNOWN_SIZES:
        if re.search(pattern, name):
            return size
    m = _SIZE.search(name)
    return float(m[1]) if m else _DEFAULT_B
