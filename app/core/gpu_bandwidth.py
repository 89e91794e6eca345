"""Memory bandwidth per GPU model, from the vendor's spec sheets (decimal GB/s).

A Python table rather than a data file: core/ reads no files, and a user whose
card is missing (or who measured their own figure) sets
`hosts.ALIAS.gpu_bandwidth_gbps` in the config instead.

Names are matched as `nvidia-smi` prints them ("NVIDIA H100 80GB HBM3",
"NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 4090", "Tesla T4"), after dropping the
vendor words and turning `-`/`_` into spaces. The first pattern that matches wins,
so the more specific variant of a model comes before its plain name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VENDOR_WORDS = re.compile(r"\b(?:NVIDIA|TESLA|GEFORCE|QUADRO)\b")


@dataclass(frozen=True, slots=True)
class GpuBandwidth:
    model: str  # the model the figure is for, as a person names it
    gb_s: float  # per GPU, 10^9 bytes per second


# (pattern over the normalised upper-case name, model, GB/s)
_TABLE: tuple[tuple[str, str, float], ...] = (
    # Blackwell
    (r"\bGB200\b", "GB200", 8000),
    (r"\bB200\b", "B200", 8000),
    (r"\bB100\b", "B100", 8000),
    (r"\bRTX PRO 6000\b", "RTX PRO 6000 Blackwell", 1792),
    (r"\bRTX 5090\b", "RTX 5090", 1792),
    # Hopper
    (r"\bH200\b", "H200", 4800),
    (r"\bH100\b.*\bNVL\b", "H100 NVL", 3900),
    (r"\bH100\b.*\bPCIE\b", "H100 PCIe", 2000),
    (r"\bH100\b", "H100 SXM", 3350),
    (r"\bH800\b.*\bPCIE\b", "H800 PCIe", 2000),
    (r"\bH800\b", "H800 SXM", 3350),
    (r"\bH20\b", "H20", 4000),
    # Ada
    (r"\bL40S\b", "L40S", 864),
    (r"\bL40\b", "L40", 864),
    (r"\bL4\b", "L4", 300),
    (r"\bRTX 6000 ADA\b", "RTX 6000 Ada", 960),
    (r"\bRTX 4090\b", "RTX 4090", 1008),
    (r"\bRTX 4080 SUPER\b", "RTX 4080 SUPER", 736),
    (r"\bRTX 4080\b", "RTX 4080", 717),
    # Ampere
    (r"\bA100\b.*\b80GB\b.*\bPCIE\b|\bA100\b.*\bPCIE\b.*\b80GB\b", "A100 80GB PCIe", 1935),
    (r"\bA100\b.*\b80GB\b", "A100 80GB SXM", 2039),
    (r"\bA100\b", "A100 40GB", 1555),
    (r"\bA800\b.*\b80GB\b", "A800 80GB", 2039),
    (r"\bA40\b", "A40", 696),
    (r"\bA30\b", "A30", 933),
    (r"\bA10G\b", "A10G", 600),
    (r"\bA10\b", "A10", 600),
    (r"\bRTX A6000\b", "RTX A6000", 768),
    (r"\bRTX A5000\b", "RTX A5000", 768),
    (r"\bRTX A4000\b", "RTX A4000", 448),
    (r"\bRTX 3090 TI\b", "RTX 3090 Ti", 1008),
    (r"\bRTX 3090\b", "RTX 3090", 936),
    # Volta and Turing
    (r"\bV100S\b", "V100S", 1134),
    (r"\bV100\b", "V100", 900),
    (r"\bT4\b", "T4", 320),
    (r"^RTX 6000$", "Quadro RTX 6000", 672),
)
_COMPILED = tuple((re.compile(p), model, gb_s) for p, model, gb_s in _TABLE)


def normalise(name: str) -> str:
    """`NVIDIA A100-SXM4-80GB` -> `A100 SXM4 80GB`."""
    upper = re.sub(r"[-_]", " ", name.upper())
    return " ".join(_VENDOR_WORDS.sub(" ", upper).split())


def lookup(name: str) -> GpuBandwidth | None:
    """The bandwidth of the GPU model `nvidia-smi` names, or None when not in the table."""
    key = normalise(name)
    for pattern, model, gb_s in _COMPILED:
        if pattern.search(key):
            return GpuBandwidth(model, gb_s)
    return None
