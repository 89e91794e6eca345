"""nvidia-smi's CSV answers with their header, as the real samples and the stand-in
print them: `--query-gpu=... --format=csv` and `--query-compute-apps=...`. sgwatch
itself reads only headerless rows (core/gpu.parse_gpu_row); these tests read whole
answers to hold the stand-in to the real tool's shapes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sgwatch.core.gpu import CsvError, GpuSample, Value, parse_gpu_row

_HEADER_CELL = re.compile(r"[a-z][a-z0-9_.]*(?: \[[^\]]+\])?")


@dataclass(slots=True)
class ComputeApp:
    pid: int | None = None
    process_name: str | None = None
    used_mib: float | None = None
    unavailable: dict[str, str] = field(default_factory=dict)


def parse_gpu_csv(text: str, fields: list[str] | None = None) -> list[GpuSample]:
    """Rows of a --query-gpu answer. Without `fields` the text must have its header."""
    names, lines = _table(text, fields)
    return [parse_gpu_row(line, names) for line in lines]


def parse_apps_csv(text: str, fields: list[str] | None = None) -> list[ComputeApp]:
    """Rows of a --query-compute-apps answer (none when no process uses a GPU)."""
    names, lines = _table(text, fields)
    return [_app(parse_gpu_row(line, names)) for line in lines]


def _app(row: GpuSample) -> ComputeApp:
    def first(*names: str) -> Value:
        return next((row.values[n] for n in names if row.values.get(n) is not None), None)

    pid = first("pid")
    name = first("process_name", "name")
    used = first("used_gpu_memory", "used_memory")
    return ComputeApp(
        pid=None if pid is None else int(pid),
        process_name=None if name is None else str(name),
        used_mib=None if used is None else float(used),
        unavailable=row.unavailable,
    )


def _table(text: str, fields: list[str] | None) -> tuple[list[str], list[str]]:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if lines and _is_header(lines[0], fields):
        return [c.split(" [", 1)[0].strip() for c in lines[0].split(",")], lines[1:]
    if fields is None:
        raise CsvError("no header line and no field list: cannot name the columns")
    return list(fields), lines


def _is_header(line: str, fields: list[str] | None) -> bool:
    cells = [c.strip() for c in line.split(",")]
    if not all(_HEADER_CELL.fullmatch(c) for c in cells):
        return False
    return fields is None or len(cells) == len(fields)
