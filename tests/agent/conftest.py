"""The MCP server as an agent's client starts it: `python -m sgwatch mcp` over stdio, with
the integration tests' sshd as its hosts and simulators launched there."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.integration.conftest import host, ssh, sshd  # noqa: F401 (fixtures)
from tests.integration.headless import SimHost
from tests.integration.sshd import command


@pytest.fixture
def sims(host, ssh, tmp_path):  # noqa: F811
    """Simulated servers on the host, and those restarted from them; all stopped after."""
    made = SimHost(host, ssh, tmp_path)
    yield made
    for proc in host.processes():
        with contextlib.suppress(OSError):
            cwd = Path(f"/proc/{proc.outside}/cwd").readlink()
            if cwd == tmp_path and "sgwatch.sim" in command(proc.outside):
                made.pids.append(proc.pid)
    made.stop()
