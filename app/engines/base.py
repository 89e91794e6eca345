"""The Engine interface: what the rest of sgwatch may ask of an inference engine.

An Engine is chosen once, from the server's launch command (`engines.for_command`),
and carried along with the watched server; nothing outside engines/ (and the
simulator's own adapter in sim/) names an engine or asks which one it is.

The data types an adapter returns (an argparse-style flag catalog, effective-vs-
requested differences, /metrics pages and windows) are engine-neutral shapes
(engines/shapes/): each engine maps its own facts into them, and the registry
re-exports them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from sgwatch.core import events as ev
from sgwatch.core.cmdline import LaunchCommand
from sgwatch.core.multinode import NodeOf

if TYPE_CHECKING:
    from sgwatch.engines.shapes.differences import Difference
    from sgwatch.engines.shapes.flags import Catalog, Problem, Selection
    from sgwatch.engines.shapes.metrics import MetricsPage, MetricsWindow


class LogParser(Protocol):
    def parse_lines(self, lines: list[str]) -> list[ev.Event]: ...

    # No record spanning lines is open (a traceback, a graph capture): a fresh parser
    # reads every later line as this one would, once a timestamped line has set its
    # clock. What lets a log's past be parsed in two parts at once (live/pastsplit.py).
    def at_rest(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class ProcessPattern:
    """How discovery recognises this engine's server in an argv on the host.

    Sent to the host as data (app/remote/host/discover.py cannot import sgwatch):
    any of `python -m MODULE`, a script path ending in SCRIPT, or a launcher, the
    pair `PROGRAM SUBCOMMAND` (`sglang serve`) or a plain executable (`llama-server`),
    marks a server of `kind`.
    """

    kind: str  # shown in the server picker: launch_server, serve, sim
    module: str | None = None
    script: str | None = None
    launcher: tuple[str, str] | tuple[str] | None = None  # ("sglang", "serve"), ("llama-server",)

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "module": self.module,
            "script": self.script,
            "launcher": list(self.launcher) if self.launcher else None,
        }


@dataclass(frozen=True, slots=True)
class FleetSeries:
    """Which of the engine's /metrics series give a fleet row's figures, by the names a
    Prometheus stores (counters with `_total`). The fleet source (app/fleet/) turns
    them into one query per figure for every engine at once."""

    generation_tokens: str  # counter: its rate is the generation tok/s
    running: str  # gauge: requests running
    waiting: str  # gauge: requests queued
    kv_usage: str  # gauge: the KV cache's share in use, 0 to 1
    ttft: tuple[str, ...]  # histograms (name without _bucket), the first found wins
    itl: tuple[str, ...]
    accept_length: str | None = None  # gauge: tokens accepted per speculative step
    # (accepted tokens, drafts) counters: the length is 1 + accepted / drafts
    accept_counters: tuple[str, str] | None = None
    model_label: str = "model_name"


@dataclass(frozen=True, slots=True)
class Engine:
    name: str
    processes: tuple[ProcessPattern, ...]
    # The package whose installed version names the engine's release on the host
    # (discovery asks the server's interpreter); None: the command says it.
    version_package: str | None
    # Where its HTTP server listens when the command names no --port.
    default_port: Callable[[LaunchCommand], int]
    parser: Callable[[], LogParser]
    split_prefix: Callable[[str], tuple[str, str | None, str] | None]
    # Pieces of lines only this engine prints (which engine wrote a log).
    markers: tuple[str, ...]
    # -- flags ------------------------------------------------------------------
    # The module of the program that prints the host parser's live catalog, sent to the
    # server's interpreter as remote/hostprogram.py builds it (None: bundled catalogs only).
    catalog_program: str | None
    # (live program output or None, the server's release or None) -> the catalog to use.
    select_catalog: Callable[[str | None, str | None], Selection]
    # What the catalog refuses or warns about in a launch command.
    check: Callable[[Catalog, LaunchCommand], list[Problem]]
    # The request for app/remote/host/preflight.py: the host's own parser judges
    # the command ({"entry", "builds_parser", "prog", "args", "checked_by"}).
    preflight_request: Callable[[LaunchCommand], dict[str, Any]]
    # (running command, the server's resolved settings, catalog) -> what it overrode.
    differences: Callable[[LaunchCommand, Mapping[str, Any], Catalog], list[Difference]]
    # -- /metrics ---------------------------------------------------------------
    read_metrics: Callable[[str], MetricsPage]  # raises MetricsError
    metrics_between: Callable[[MetricsPage, MetricsPage, float], MetricsWindow]
    # The release the command runs, when the command itself says so (an installed
    # engine's does not: discovery asks its package).
    command_version: Callable[[LaunchCommand], str | None] = lambda _cmd: None
    # Whether /metrics answers, given the server's resolved settings (SGLang: only with
    # --enable-metrics; vLLM always serves it). An engine that serves it says when.
    metrics_served: Callable[[Mapping[str, Any]], bool] = lambda _resolved: False
    # The server's own start-up figures from a /metrics page (raises MetricsError) or a
    # /server_info answer; None: it reports none (there, or yet).
    startup_from_metrics: Callable[[str], ev.ServerStartup | None] = lambda _text: None
    startup_from_info: Callable[[Mapping[str, Any]], ev.ServerStartup | None] = lambda _i: None
    # -- what the server decided on its own -----------------------------------------
    # (resolved settings, running command or None, model architecture or None) -> the
    # changes that cost speed, each with its `why`, `effect` and `override_flag`.
    speed_changes: Callable[
        [Mapping[str, Any], LaunchCommand | None, str | None], list[Difference]
    ] = lambda _resolved, _cmd, _arch: []
    # resolved settings -> the warmup phases they rule out (core/events.py names).
    ruled_out_phases: Callable[[Mapping[str, Any]], frozenset[str]] = lambda _resolved: frozenset()
    # -- servers spread over several hosts ------------------------------------------
    # Which node of such a server a command starts; None: one host (or no such concept).
    node_of: Callable[[LaunchCommand], NodeOf | None] = lambda _cmd: None
    # The model a command serves, before any log says (the server picker shows it).
    model_of: Callable[[LaunchCommand], str | None] = lambda _cmd: None
    # The engine a command's server is shown as before its log says, where it is not
    # this one (the simulator: the engine it imitates).
    imitates: Callable[[LaunchCommand], str] | None = None
    # -- a fleet in Prometheus ------------------------------------------------------
    fleet: FleetSeries | None = None  # None: its servers are not looked for in a fleet

    def shown_as(self, cmd: LaunchCommand) -> str:
        return self.name if self.imitates is None else self.imitates(cmd)

    def matches(self, cmd: LaunchCommand) -> bool:
        """Whether `cmd` starts this engine's server: discovery's rule on the host
        (app/remote/host/discover.py), applied to the program the command runs, not to
        its arguments (`python -m sgwatch.sim vllm serve M` is the simulator's)."""
        program = cmd.program
        # A launcher is the program (`sglang serve`, `llama-server`) or a script and its
        # first argument (`python /v/bin/sglang serve`).
        after = (*program[1:], *cmd.positional[:1])
        pairs = {(a.rsplit("/", 1)[-1], b) for a, b in zip(program, after, strict=False)}
        launchers: set[tuple[str, ...]] = {*pairs, (program[0].rsplit("/", 1)[-1],)}
        for p in self.processes:
            if p.module is not None and cmd.module == p.module:
                return True
            if p.script is not None and cmd.module is None and program[-1].endswith(p.script):
                return True
            if p.launcher in launchers:
                return True
        return False

    def wrote(self, line: str) -> bool:
        """Whether `line` is one only this engine prints."""
        return any(marker in line for marker in self.markers)

    def process_patterns(self) -> list[dict[str, Any]]:
        """The patterns as app/remote/host/discover.py reads them."""
        extra = {"engine": self.name, "version_package": self.version_package}
        return [{**p.as_json(), **extra} for p in self.processes]
