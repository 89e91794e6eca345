"""nvidia-smi output -> GPU samples. Pure: text in, dataclasses out.

Reads what these print (the shapes are in the shared nvidia-smi-* samples):
- `nvidia-smi --query-gpu=F1,F2,... --format=csv[,noheader][,nounits]`
- `nvidia-smi --query-compute-apps=pid,process_name,used_gpu_memory --format=csv...`
- `nvidia-smi -L`

CSV cells are separated by ", ". The header names each field with its unit
(`memory.used [MiB]`) unless `noheader`; values carry the unit (`745 MiB`,
`30 %`, `26.47 W`) unless `nounits`. An unavailable value is a bracketed
placeholder (`[N/A]`, `[Not Supported]`, `[Insufficient Permissions]`): it
becomes None, and the placeholder is kept in `unavailable` so a view can say why.
GPU names contain spaces but never commas.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeVar

Value = float | int | str | None

_HEADER_CELL = re.compile(r"[a-z][a-z0-9_.]*(?: \[[^\]]+\])?")
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
_APP_FIELDS = {
    "pid": "pid",
    "process_name": "process_name",
    "name": "process_name",
    "used_gpu_memory": "used_mib",
    "used_memory": "used_mib",
    "gpu_uuid": "gpu_uuid",
}
_INTEGER_FIELDS = {"index", "pid"}


_Row = TypeVar("_Row", "GpuSample", "ComputeApp")


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


@dataclass(slots=True)
class ComputeApp:
    pid: int | None = None
    process_name: str | None = None
    used_mib: float | None = None
    gpu_uuid: str | None = None
    values: dict[str, Value] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)


def parse_gpu_csv(text: str, fields: list[str] | None = None) -> list[GpuSample]:
    """Rows of a --query-gpu answer. Without `fields` the text must have its header."""
    names, rows = _table(text, fields)
    return [_fill(GpuSample(), _GPU_FIELDS, names, row) for row in rows]


def parse_gpu_row(line: str, fields: list[str]) -> GpuSample:
    """One row of a `noheader` stream (e.g. a `-lms` loop), fields as queried."""
    return _fill(GpuSample(), _GPU_FIELDS, fields, _cells(line, len(fields)))


def parse_apps_csv(text: str, fields: list[str] | None = None) -> list[ComputeApp]:
    """Rows of a --query-compute-apps answer (none when no process uses a GPU)."""
    names, rows = _table(text, fields)
    return [_fill(ComputeApp(), _APP_FIELDS, names, row) for row in rows]


def parse_gpu_list(text: str) -> list[GpuSample]:
    """`nvidia-smi -L`: `GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)`; MIG lines skipped."""
    out = []
    for line in text.splitlines():
        m = _LIST_LINE.fullmatch(line.strip())
        if m:
            out.append(GpuSample(index=int(m[1]), name=m[2], uuid=m[3]))
    return out


def field_name(header_cell: str) -> str:
    """`memory.used [MiB]` -> `memory.used`."""
    return header_cell.split(" [", 1)[0].strip()


def _table(text: str, fields: list[str] | None) -> tuple[list[str], list[list[str]]]:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if lines and _is_header(lines[0], fields):
        names = [field_name(c) for c in lines[0].split(",")]
        lines = lines[1:]
    elif fields is None:
        raise CsvError("no header line and no field list: cannot name the columns")
    else:
        names = list(fields)
    return names, [_cells(ln, len(names)) for ln in lines]


def _is_header(line: str, fields: list[str] | None) -> bool:
    cells = [c.strip() for c in line.split(",")]
    if not all(_HEADER_CELL.fullmatch(c) for c in cells):
        return False
    return fields is None or len(cells) == len(fields)


def _cells(line: str, width: int) -> list[str]:
    cells = [c.strip() for c in line.split(",")]
    if len(cells) != width:
        raise CsvError(f"expected {width} values, got {len(cells)}: {line!r}")
    return cells


def _fill(out: _Row, attrs: dict[str, str], names: list[str], cells: list[str]) -> _Row:
    for name, cell in zip(names, cells, strict=True):
        value = _value(name, cell)
        if value is None:
            out.unavailable[name] = cell
        out.values[name] = value
        attr = attrs.get(name)
        if attr is not None and getattr(out, attr) is None:
            setattr(out, attr, value)
    return out


def _value(name: str, cell: str) -> Value:
    if not cell or cell.startswith("[") or cell == _PLACEHOLDER:
        return None
    m = _NUMBER.fullmatch(cell)
    if m is None:
        return cell
    if name in _INTEGER_FIELDS:
        return int(float(m[1]))
    return float(m[1])
