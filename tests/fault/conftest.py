"""The fault suite: the integration tests' sshd, reached through a FaultProxy.

`SGWATCH_FAULT_SEED` replays a failing run's random schedule; every test that draws
one prints its seed when it fails.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fault.proxy import FaultProxy
from tests.integration.conftest import host, link, ssh, sshd  # noqa: F401 (fixtures)
from tests.integration.sshd import SshdServer

ALIAS = "flaky129"  # the sshd through the proxy


def figures(**values) -> None:
    """Append a test's measurements to $SGWATCH_FAULT_FIGURES (a JSON line), if set."""
    if path := os.environ.get("SGWATCH_FAULT_FIGURES"):
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


@pytest.fixture
def proxy(host: SshdServer) -> Iterator[FaultProxy]:  # noqa: F811
    p = FaultProxy(host.port).start()
    yield p
    p.stop()


@pytest.fixture
def flaky_config(host: SshdServer, proxy: FaultProxy, tmp_path: Path) -> Path:  # noqa: F811
    """An ssh_config with `flaky129`, the sshd through the proxy (host key and all),
    besides the fixture's own aliases; keepalive as a user's config might set it."""
    kind, blob = host.host_key.with_suffix(".pub").read_text().split()[:2]
    known = tmp_path / "known_hosts"
    known.write_text(host.host_key_line() + f"[127.0.0.1]:{proxy.port} {kind} {blob}\n")
    text = host.client_config(known)
    first = text.split("\n\n")[0].replace("Host ct129 jump129", f"Host {ALIAS}")
    cfg = tmp_path / "ssh_config"
    cfg.write_text(first.replace(f"Port {host.port}", f"Port {proxy.port}") + "\n\n" + text)
    return cfg


@pytest.fixture
def seed(request: pytest.FixtureRequest) -> int:
    """The random schedule's seed: SGWATCH_FAULT_SEED, else a fresh one."""
    s = int(os.environ.get("SGWATCH_FAULT_SEED") or random.randrange(1 << 32))
    request.node.user_properties.append(("fault seed", s))
    return s


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed:
        for name, value in item.user_properties:
            if name == "fault seed":
                report.sections.append(("fault seed", f"replay with SGWATCH_FAULT_SEED={value}"))
    return report
