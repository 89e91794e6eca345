"""nvidia-smi output -> GPU samples. Pure: text in, dataclasses out.

Reads what these print:
- a row of `nvidia-smi --query-gpu=F1,F2,... --format=csv,noheader[,nounits]`, the
  fields as queried (the GPU stream's `-lms` loop);
- `nvidia-smi -L` (discovery's list of cards).

CSV cells are separated by ", ". Values carry the unit (`745 MiB`, `30 %`,
`26.47 W`) unless `nounits`. An unavailable value is a bracketed placeholder
(`[N/A]`, `[Not Supported]`, `[Insufficient Permissions]`): it becomes None, and
the placeholder is kept in `unavailable` so a view can say why. GPU names contain
spaces but never commas.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Value = float | int | str | None

_NUMBER = re.compile(r"(-?\d+(?:\.\d+)?)(?: ?(?:MiB|GiB|KiB|W|%|MHz|C))?")
_LIST_LINE = re.compile(r"GPU (\d+): (.+?)(?: \(UUID: ([^)]+)\))?")
_PLACEHOLDER = "N/A"

# Field names nvidia-smi accepts -> the sample attribute they fill.
_GPU_FIELDS = {
    "index": "index",
    "name": "name",
    "gpu_name": "name",
    "uuid": "uuid",
    "gpu_uuid": "uuid",
    "utilization.gpu": "util_pct",
    "memory.used": "mem_used_mib",
    "memory.total": "mem_total_mib",
    "memory.free": "mem_free_mib",
    "power.draw": "power_w",
    "power.draw.instant": "power_w",
    "power.draw.average": "power_w",
    "power.limit": "power_limit_w",
    "enforced.power.limit": "power_limit_w",
    "temperature.gpu": "temp_c",
}
_INTEGER_FIELDS = {"index"}


class CsvError(ValueError):
    """The text is not nvidia-smi CSV for the fields asked."""


@dataclass(slots=True)
class GpuSample:
    index: int | None = None
    name: str | None = None
    uuid: str | None = None
    util_pct: float | None = None
    mem_used_mib: float | None = None
    mem_total_mib: float | None = None
    mem_free_mib: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    temp_c: float | None = None
    values: dict[str, Value] = field(default_factory=dict)  # every field, by query name
    unavailable: dict[str, str] = field(default_factory=dict)  # field -> "[N/A]" etc.


def parse_gpu_row(line: str, fields: list[str]) -> GpuSample:
    """One row of a `noheader` stream (e.g. a `-lms` loop), fields as queried; every
    field's value is in `values` by its name, the known ones also in attributes."""
    out = GpuSample()
    for name, cell in zip(fields, _cells(line, len(fields)), strict=True):
        value = _value(name, cell)
        if value is None:
            out.unavailable[name] = cell
        out.values[name] = value
        attr = _GPU_FIELDS.get(name)
        if attr is not None and getattr(out, attr) is None:
            setattr(out, attr, value)
    return out


def parse_gpu_list(text: str) -> list[GpuSample]:
    """`nvidia-smi -L`: `GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)`; MIG lines skipped."""
    out = []
    for line in text.splitlines():
        m = _LIST_LINE.fullmatch(line.strip())
        if m:
            out.append(GpuSample(index=int(m[1]), name=m[2], uuid=m[3]))
    return out


def _cells(line: str, width: int) -> list[str]:
    cells = [c.strip() for c in line.split(",")]
    if len(cells) != width:
        raise CsvError(f"expected {width} values, got {len(cells)}: {line!r}")
    return cells


def _value(name: str, cell: str) -> Value:
    if not cell or cell.startswith("[") or cell == _PLACEHOLDER:
        return None
    m = _NUMBER.fullmatch(cell)
    if m is None:
        return cell
    if name in _INTEGER_FIELDS:
        return int(float(m[1]))
    return float(m[1])
