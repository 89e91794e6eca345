"""The engines registry: the one place that lists the engines sgwatch knows.

    engine = for_command(parse(argv))   # chosen once, from the launch command
    engine = by_name(server.engine)     # as discovery named it on the host
    name = for_log_line(line)           # which engine wrote a log ("sglang", "vllm", None)

Everything outside engines/ asks the Engine it was handed (engines/base.py);
the data types every engine returns are re-exported here.
"""

from __future__ import annotations

import functools
from typing import Any

from sgwatch.core.cmdline import LaunchCommand, add_launcher
from sgwatch.engines.base import Engine
from sgwatch.engines.sglang import ENGINE as _SGLANG
from sgwatch.engines.shapes import (
    Catalog,
    Difference,
    FlagOption,
    MetricsError,
    MetricsPage,
    MetricsWindow,
    Problem,
    Selection,
)
from sgwatch.engines.vllm import ENGINE as _VLLM

__all__ = [
    "Catalog",
    "Difference",
    "Engine",
    "FlagOption",
    "MetricsError",
    "MetricsPage",
    "MetricsWindow",
    "Problem",
    "Selection",
    "all_engines",
    "by_name",
    "default",
    "for_command",
    "for_log_line",
    "process_patterns",
    "split_prefix",
]


@functools.cache
def all_engines() -> tuple[Engine, ...]:
    # The simulator's adapter is imported here, not at the top: sim/ ranks above engines/.
    from sgwatch.sim.engine import ENGINE as SIM

    return (_SGLANG, _VLLM, SIM)


def default() -> Engine:
    """The engine assumed until a command or a log says otherwise."""
    return _SGLANG


def of_log(name: str | None) -> Engine:
    """The engine that wrote a log whose lines say `name` (ServerState.engine): the
    default until a line says, or for an engine recognised without an adapter."""
    try:
        return by_name(name) if name else default()
    except KeyError:
        return default()


def by_name(name: str) -> Engine:
    for engine in all_engines():
        if engine.name == name:
            return engine
    raise KeyError(f"no engine named {name!r}")


def for_command(cmd: LaunchCommand) -> Engine | None:
    """The engine whose server `cmd` launches, or None."""
    return next((e for e in all_engines() if e.matches(cmd)), None)


def for_log_line(line: str) -> str | None:
    """The engine that wrote `line`, by name, when only one engine prints it
    (SGLang first: its logs can hold vLLM-style lines; the simulator writes SGLang's)."""
    return next((e.name for e in (_SGLANG, _VLLM) if e.wrote(line)), None)


def process_patterns() -> list[dict[str, Any]]:
    """How every engine's server looks in a process list, for host discovery."""
    return [p for e in all_engines() for p in e.process_patterns()]


@functools.cache
def _splitters() -> tuple[Any, ...]:
    return tuple(dict.fromkeys(e.split_prefix for e in all_engines()))  # the simulator shares one


def split_prefix(line: str) -> tuple[str, str | None, str] | None:
    """(ts, rank, message) of a log record in any known engine's format, else None."""
    for split in _splitters():
        if (found := split(line)) is not None:
            return found
    return None


def _add_launchers() -> None:
    """Every engine's `PROGRAM SUBCOMMAND` launcher, for core/cmdline.py's parse."""
    for engine in all_engines():
        for p in engine.processes:
            if p.launcher is not None:
                add_launcher(*p.launcher)


_add_launchers()
