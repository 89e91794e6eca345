"""A stand-in for `nvidia-smi`, answering from the simulated servers' GPU state.

Answers what sgwatch and people run: `-L`, `--query-gpu=FIELDS` and
`--query-compute-apps=FIELDS` with `--format=csv[,noheader][,nounits]`, `-i`
to pick cards, and `-l SEC` / `-lms MS` loops (header once, then rows until
killed). An unknown field fails as nvidia-smi fails: `Field "x" is not a valid
field to query.` and exit status 2. `install(bin_dir)` writes an executable
named `nvidia-smi` that runs this module with the current interpreter, for
tests and the demo to put first on PATH.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from sgwatch.sim.common import gpustate
from sgwatch.sim.common.gpustate import App, Card, GpuSpec

BAD_ARGS = "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help."
DRIVER, CUDA = "570.133.20", "12.8"

Getter = Callable[[Card], object]
# Query name -> (canonical header name, unit or "", value getter).
GPU_FIELDS: dict[str, tuple[str, str, Getter]] = {
    "timestamp": ("timestamp", "", lambda c: datetime.now().strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]),
    "driver_version": ("driver_version", "", lambda c: DRIVER),
    "count": ("count", "", lambda c: None),  # filled in by the caller
    "index": ("index", "", lambda c: c.index),
    "name": ("name", "", lambda c: c.name),
    "gpu_name": ("name", "", lambda c: c.name),
    "uuid": ("uuid", "", lambda c: gpustate.uuid(c.index)),
    "gpu_uuid": ("uuid", "", lambda c: gpustate.uuid(c.index)),
    "pci.bus_id": ("pci.bus_id", "", lambda c: gpustate.bus_id(c.index)),
    "gpu_bus_id": ("pci.bus_id", "", lambda c: gpustate.bus_id(c.index)),
    "persistence_mode": ("persistence_mode", "", lambda c: "Enabled"),
    "pstate": ("pstate", "", lambda c: "P0" if c.used_mib > gpustate.IDLE_MIB else "P8"),
    "fan.speed": ("fan.speed", "%", lambda c: "[N/A]"),  # datacenter cards have no fan
    "temperature.gpu": ("temperature.gpu", "", lambda c: c.temp_c),
    "utilization.gpu": ("utilization.gpu", "%", lambda c: round(c.util)),
    "utilization.memory": ("utilization.memory", "%", lambda c: round(c.util * 0.6)),
    "memory.total": ("memory.total", "MiB", lambda c: c.total_mib),
    "memory.used": ("memory.used", "MiB", lambda c: round(c.used_mib)),
    "memory.free": ("memory.free", "MiB", lambda c: c.total_mib - round(c.used_mib)),
    "power.draw": ("power.draw", "W", lambda c: f"{c.power_w:.2f}"),
    "power.limit": ("power.limit", "W", lambda c: "700.00"),
    "clocks.current.graphics": ("clocks.current.graphics", "MHz", lambda c: _clock(c)),
    "clocks.gr": ("clocks.current.graphics", "MHz", lambda c: _clock(c)),
    "clocks.current.sm": ("clocks.current.sm", "MHz", lambda c: _clock(c)),
    "clocks.sm": ("clocks.current.sm", "MHz", lambda c: _clock(c)),
    "clocks.current.memory": ("clocks.current.memory", "MHz", lambda c: 2619),
    "clocks.mem": ("clocks.current.memory", "MHz", lambda c: 2619),
}
AppGetter = Callable[[App], object]
APP_FIELDS: dict[str, tuple[str, str, AppGetter]] = {
    "timestamp": ("timestamp", "", lambda a: datetime.now().strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]),
    "gpu_name": ("gpu_name", "", lambda a: GpuSpec.from_env().name),
    "gpu_bus_id": ("gpu_bus_id", "", lambda a: gpustate.bus_id(a.gpu)),
    "gpu_serial": ("gpu_serial", "", lambda a: f"16523220{a.gpu:05d}"),
    "gpu_uuid": ("gpu_uuid", "", lambda a: gpustate.uuid(a.gpu)),
    "pid": ("pid", "", lambda a: a.pid),
    "process_name": ("process_name", "", lambda a: a.name),
    "name": ("process_name", "", lambda a: a.name),
    "used_gpu_memory": ("used_gpu_memory", "MiB", lambda a: round(a.used_mib)),
    "used_memory": ("used_gpu_memory", "MiB", lambda a: round(a.used_mib)),
}


def _clock(card: Card) -> int:
    return 1980 if card.util > 0 else 345


class Usage(Exception):
    """Arguments nvidia-smi would reject."""


def main(argv: list[str]) -> int:
    try:
        opts = _parse(argv)
    except Usage as e:
        print(str(e) or BAD_ARGS)
        return 2
    spec = GpuSpec.from_env()
    try:
        if opts["list"]:
            for card in _cards(spec, opts["ids"]):
                print(f"GPU {card.index}: {card.name} (UUID: {gpustate.uuid(card.index)})")
            return 0
        query, table = (opts["gpu"], GPU_FIELDS) if opts["gpu"] else (opts["apps"], APP_FIELDS)
        if query is None:
            print(BAD_ARGS)
            return 2
        for name in query:
            if name not in table:
                print(f'Field "{name}" is not a valid field to query.\n')
                return 2
        return _report(spec, opts, query, table)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


def _report(spec: GpuSpec, opts: dict, query: list[str], table: dict) -> int:
    header, units = "noheader" not in opts["format"], "nounits" not in opts["format"]
    if header:
        cells = [table[f][0] + (f" [{table[f][1]}]" if table[f][1] else "") for f in query]
        print(", ".join(cells))
    while True:
        cards = _cards(spec, opts["ids"])
        rows = cards if opts["gpu"] else [a for c in cards for a in c.apps]
        for row in rows:
            print(", ".join(_cell(table[f], row, units, len(cards)) for f in query))
        sys.stdout.flush()
        if opts["loop"] is None:
            return 0
        time.sleep(opts["loop"])


def _cell(entry: tuple[str, str, Callable], row: object, units: bool, count: int) -> str:
    name, unit, get = entry
    value = count if name == "count" else get(row)
    text = str(value)
    if unit and units and not text.startswith("["):
        text += f" {unit}"
    return text


def _cards(spec: GpuSpec, ids: list[int] | None) -> list[Card]:
    cards = gpustate.read(spec)
    return cards if ids is None else [c for c in cards if c.index in ids]


def _parse(argv: list[str]) -> dict:
    opts: dict = {"list": False, "gpu": None, "apps": None, "format": [], "loop": None, "ids": None}
    args = iter(argv)
    for arg in args:
        key, eq, value = arg.partition("=")
        if arg in ("-L", "--list-gpus"):
            opts["list"] = True
        elif key == "--query-gpu" and eq:
            opts["gpu"] = _fields(value)
        elif key == "--query-compute-apps" and eq:
            opts["apps"] = _fields(value)
        elif key == "--format" and eq:
            opts["format"] = value.split(",")
            if opts["format"][0] != "csv":
                raise Usage("Format modifier is not recognized.")
        elif key in ("-l", "--loop", "-lms", "--loop-ms"):
            raw = value if eq else next(args, None)
            try:
                period = float(raw) if raw is not None else 5.0
            except ValueError as e:
                raise Usage() from e
            opts["loop"] = period / 1000 if key in ("-lms", "--loop-ms") else period
        elif key in ("-i", "--id"):
            raw = value if eq else next(args, "")
            try:
                opts["ids"] = [int(x) for x in raw.split(",")]
            except ValueError as e:
                raise Usage() from e
        else:
            raise Usage()
    if opts["gpu"] is None and opts["apps"] is None and not opts["list"]:
        raise Usage("This stand-in answers -L, --query-gpu and --query-compute-apps only.")
    return opts


def _fields(text: str) -> list[str]:
    return [f.strip() for f in text.split(",") if f.strip()]


def install(bin_dir: str | Path, state: str | Path | None = None) -> Path:
    """Write `bin_dir/nvidia-smi`, running this stand-in with this interpreter.

    `state` pins the simulated servers' state folder (else the launcher
    inherits SGWATCH_SIM_STATE from whoever runs it).
    """
    folder = Path(bin_dir)
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["#!/bin/sh"]
    if state is not None:
        lines.append(f"{gpustate.STATE_ENV}={shlex.quote(str(state))}; export {gpustate.STATE_ENV}")
    lines.append(f'exec {shlex.quote(sys.executable)} -m sgwatch.sim.common.nvidia_smi "$@"')
    path = folder / "nvidia-smi"
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o755)
    return path


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
