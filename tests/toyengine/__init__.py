"""A minimal engine, defined outside sgwatch: what docs/ADDING_AN_ENGINE.md describes.

Loaded as any engine not installed as a package is: SGWATCH_ENGINES=tests.toyengine:ENGINE.
Its server is server.py beside this file (a log and a process, nothing served); its
flags are catalog.json. Every field of ENGINE is answered here and nothing outside
this folder knows it exists.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sgwatch.core import events as ev
from sgwatch.core.cmdline import LaunchCommand, value_of
from sgwatch.core.identity import RunIdentity
from sgwatch.engines import Catalog, Difference, MetricsError, MetricsPage, Problem, Selection
from sgwatch.engines.base import Engine, ProcessPattern
from sgwatch.engines.shapes.metrics import between

NAME = "toy"
CATALOG = Catalog.from_json((Path(__file__).parent / "catalog.json").read_text())
_PREFIX = re.compile(r"\[toy (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] (.*)")
_BANNER = re.compile(r"toy-engine (\S+) starting: model=(\S+) port=(\d+)")
_LOADED = re.compile(r"weights loaded in ([\d.]+) s, ([\d.]+) GB")
_DECODE = re.compile(r"decode: ([\d.]+) tok/s")
_FATAL = re.compile(r"fatal: ((\w+): .*)")


def split_prefix(line: str) -> tuple[str, str | None, str] | None:
    """(ts, rank, message) of `[toy 2026-01-01 10:00:00] message`; the toy has no ranks."""
    m = _PREFIX.match(line)
    return (m.group(1), None, m.group(2)) if m else None


class Parser:
    """The toy's log lines -> sgwatch's events (core/events.py), one line at a time."""

    def parse_lines(self, lines: list[str]) -> list[ev.Event]:
        return [e for line in lines if (e := self._parse(line)) is not None]

    def at_rest(self) -> bool:
        return True  # no record spans lines

    def _parse(self, line: str) -> ev.Event | None:
        found = split_prefix(line)
        if found is None:
            return None
        ts, rank, message = found
        if m := _BANNER.match(message):
            version, model, port = m.groups()
            args = {"model": model, "port": int(port)}  # the toy's own names, for its own use
            identity = RunIdentity(model=model, release=version)  # what the rest of sgwatch reads
            return ev.RunStarted(ts, "banner", args, version, identity)
        if message == "loading weights":
            return ev.PhaseSeen(ts, rank, ev.LOADING_WEIGHTS, message)
        if m := _LOADED.match(message):
            return ev.WeightsLoaded(ts, rank, float(m.group(1)), float(m.group(2)))
        if message.startswith("ready on port"):
            return ev.Ready(ts)
        if m := _DECODE.match(message):
            return ev.Batch(ts, rank, "decode", message, float(m.group(1)))
        if m := _FATAL.match(message):
            return ev.Crash(ts, rank, m.group(1), line, m.group(2), specific=True)
        return None


def select_catalog(_live_output: str | None, _version: str | None) -> Selection:
    return Selection(CATALOG, "bundled", f"bundled toy {CATALOG.version} (catalog.json)")


def check(catalog: Catalog, cmd: LaunchCommand) -> list[Problem]:
    return catalog.check(cmd)


def preflight_request(cmd: LaunchCommand) -> dict[str, Any]:
    return {
        "entry": "tests.toyengine.server:startup_error",
        "builds_parser": False,
        "prog": None,
        "args": [t for f in cmd.flags for t in f.tokens],
        "checked_by": "the toy server's parser",
    }


def differences(
    _cmd: LaunchCommand | None, _resolved: Mapping[str, Any], _catalog: Catalog
) -> list[Difference]:
    return []  # the toy runs what it is asked to


def read_metrics(_text: str) -> MetricsPage:
    raise MetricsError("the toy engine serves no /metrics")


def ruled_out_phases(_resolved: Mapping[str, Any]) -> frozenset[str]:
    return frozenset({ev.CAPTURING_GRAPHS, ev.COMPILING, ev.WARMING_UP})  # the toy has none


def default_port(cmd: LaunchCommand) -> int:
    port = value_of(cmd, "--port")
    return int(port) if isinstance(port, str) else 7000


ENGINE = Engine(
    name=NAME,
    processes=(ProcessPattern("toy", script="toyengine/server.py"),),
    version_package=None,
    default_port=default_port,
    parser=Parser,
    split_prefix=split_prefix,
    markers=("toy-engine ",),
    catalog_program=None,
    select_catalog=select_catalog,
    check=check,
    preflight_request=preflight_request,
    differences=differences,
    read_metrics=read_metrics,
    metrics_between=between,
    ruled_out_phases=ruled_out_phases,
)
