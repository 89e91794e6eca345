"""vLLM's command line as its parser reads it, for the flag catalog and the preflight.

vLLM's FlexibleArgumentParser accepts spellings the catalog does not list: `_`
for `-` in a flag's name (`--gpu_memory_utilization`) and dotted keys of a JSON
flag (`--compilation-config.cudagraph_mode=FULL`, `-O.level 3`, `--x.list+ v`),
which it merges into that flag's JSON value. `parser_view` rewrites a command
into the spellings the catalog has, each dotted key as a one-key JSON object,
so the shared catalog checks it flag by flag.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from typing import Any

from sgwatch.core.cmdline import Flag, LaunchCommand
from sgwatch.engines.shapes.flags import Catalog, Problem
from sgwatch.engines.vllm.catalog import bundled

PROG = ("vllm", "serve")
PREFLIGHT_PARSERS = (
    "vllm.utils.argparse_utils:FlexibleArgumentParser|vllm.utils:FlexibleArgumentParser"
)
PREFLIGHT_ENTRY = (
    "vllm.entrypoints.openai.cli_args:make_arg_parser"
    "|vllm.entrypoints.common.cli_args:make_arg_parser"
)


def parser_view(cmd: LaunchCommand) -> LaunchCommand:
    """`cmd` with vLLM's flexible spellings in their canonical form."""
    return dataclasses.replace(cmd, flags=tuple(_canonical(f) for f in cmd.flags))


def _canonical(flag: Flag) -> Flag:
    name = flag.name
    if not name.startswith("--") and not name.startswith("-O."):
        return flag
    head, dot, key = name.partition(".")
    if head.startswith("--"):
        head = "--" + head[2:].replace("_", "-")
    if not dot:
        return dataclasses.replace(flag, name=head)
    value: Any = flag.values[0] if flag.values else True
    with contextlib.suppress(ValueError):  # a bare word stays a string, as vLLM reads it
        value = json.loads(value) if isinstance(value, str) else value
    doc: dict[str, Any] = {}
    node = doc
    parts = key.rstrip("+").split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = [value] if key.endswith("+") else value
    return Flag(head, (json.dumps(doc),), inline=False)


def server_view(cmd: LaunchCommand) -> LaunchCommand:
    """The command as `vllm serve` sees it: the model positional, then the flags."""
    view = parser_view(cmd)
    if view.program[-2:] == PROG:
        return view
    return dataclasses.replace(view, program=PROG, positional=view.positional[:1])


def check(catalog: Catalog, cmd: LaunchCommand) -> list[Problem]:
    """The catalog's verdict; an unknown flag names the bundled releases that accept it."""
    others = [c for c in bundled() if c.version != catalog.version]
    return catalog.check(server_view(cmd), others=others)


def parser_args(cmd: LaunchCommand) -> list[str]:
    """What `vllm serve`'s parser is given: the model tag, then every flag as written."""
    return [*cmd.positional[:1], *(t for f in cmd.flags for t in f.tokens)]


def preflight_request(cmd: LaunchCommand) -> dict[str, Any]:
    return {
        "entry": PREFLIGHT_ENTRY,
        "builds_parser": True,
        "parser": PREFLIGHT_PARSERS,
        "prog": "vllm serve",
        "args": parser_args(cmd),
        "checked_by": "the host's vLLM parser",
    }
