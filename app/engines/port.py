"""The port a server listens on, read from its command line: where sgwatch reaches its
HTTP API, and which of a host's servers a fleet row (a scrape instance's port) names."""

from __future__ import annotations

from sgwatch.core.cmdline import parse, value_of
from sgwatch.engines import default, for_command


def server_port(argv: list[str]) -> int:
    """`--port N` (or `--port=N`), else the default of the engine the command starts
    (SGLang 30000, vLLM 8000)."""
    cmd = parse(argv)
    value = value_of(cmd, "--port")
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return (for_command(cmd) or default()).default_port(cmd)
