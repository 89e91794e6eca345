"""The engines registry: the one place that lists the engines sgwatch knows.

    engine = for_command(parse(argv))   # chosen once, from the launch command
    engine = by_name(server.engine)     # as discovery named it on the host
    name = for_log_line(line)           # which engine wrote a log ("sglang", "vllm", None)

SGLang and vLLM are built in; any other engine (the simulator's adapter, one a
package adds, one under tests/) is a plug-in, found the same way for each:
    - an entry point in the group `sgwatch.engines` (`name = "module:ENGINE"`, as
      pyproject.toml declares the simulator's), or
    - the environment variable SGWATCH_ENGINES, `module:ATTR[,module:ATTR...]`,
      for an engine that is importable but not installed as a package.
One that fails to load is skipped with one line on stderr. docs/ADDING_AN_ENGINE.md
says what an engine provides. Everything outside engines/ asks the Engine it was
handed (engines/base.py); the shapes every engine returns are re-exported here.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Any

from sgwatch.core.cmdline import LaunchCommand, declare_launchers_with, register_launchers
from sgwatch.engines import outerprefix, shapes
from sgwatch.engines.base import Engine
from sgwatch.engines.sglang import ENGINE as _SGLANG
from sgwatch.engines.shapes import *  # noqa: F403 (re-exported: the shapes every engine returns)
from sgwatch.engines.vllm import ENGINE as _VLLM

__all__ = [
    *shapes.__all__,
    "Engine",
    "all_engines",
    "by_name",
    "default",
    "for_command",
    "for_log_line",
    "process_patterns",
    "split_prefix",
]


GROUP = "sgwatch.engines"  # the entry-point group of plug-in engines
ENV = "SGWATCH_ENGINES"  # module:ATTR, comma-separated


@functools.cache
def all_engines() -> tuple[Engine, ...]:
    """The built-in engines, then each plug-in that loads, in the order found."""
    found = [_SGLANG, _VLLM]
    for address, load in _plugins():
        try:
            engine = load()
        except Exception as e:  # any error of a plug-in's import is its own, not ours
            _skip(address, f"{type(e).__name__}: {e}")
            continue
        if not isinstance(engine, Engine):
            _skip(address, f"{type(engine).__name__} is not an Engine")
        elif any(e.name == engine.name for e in found):
            _skip(address, f"an engine named {engine.name!r} is already known")
        else:
            found.append(engine)
    # The one place core/cmdline.py learns the launchers `parse` recognises.
    register_launchers(p.launcher for e in found for p in e.processes if p.launcher)
    return tuple(found)


def _plugins() -> Iterator[tuple[str, Callable[[], Any]]]:
    """(address, loader) of every plug-in engine: entry points, then SGWATCH_ENGINES."""
    for ep in entry_points(group=GROUP):
        yield ep.value, ep.load
    for address in filter(None, (a.strip() for a in os.environ.get(ENV, "").split(","))):
        yield address, functools.partial(_load, address)


def _load(address: str) -> Any:
    module, colon, attr = address.partition(":")
    if not colon or not module or not attr:
        raise ValueError("expected module:ATTR")
    return getattr(importlib.import_module(module), attr)


def _skip(address: str, why: str) -> None:
    print(f"sgwatch: engine {address} not loaded ({why.splitlines()[0]})", file=sys.stderr)


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
    """The engine that wrote `line`, by name, when only one engine prints it (SGLang
    first: its logs can hold vLLM-style lines; the simulator's markers are SGLang's, so
    its logs read as the engine it imitates)."""
    return next((e.name for e in all_engines() if e.wrote(line)), None)


def process_patterns() -> list[dict[str, Any]]:
    """How every engine's server looks in a process list, for host discovery."""
    return [p for e in all_engines() for p in e.process_patterns()]


@functools.cache
def _splitters() -> tuple[Any, ...]:
    return tuple(dict.fromkeys(e.split_prefix for e in all_engines()))  # the simulator shares one


def split_prefix(line: str) -> tuple[str, str | None, str] | None:
    """(ts, rank, message) of a log record in any known engine's format, else None;
    the prefixes its carrier added (engines/outerprefix.py) are read past first."""
    line = outerprefix.strip(line)
    for split in _splitters():
        if (found := split(line)) is not None:
            return found
    return None


# The list is made on first use, plug-ins loaded then: a plug-in's own module may import
# this registry first (the simulator's adapter does) without meeting its half-built self.
declare_launchers_with(all_engines)
