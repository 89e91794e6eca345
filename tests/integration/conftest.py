from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sgwatch.transport.link import Backoff, Link
from sgwatch.transport.ssh import SshTransport
from tests.integration.headless import Rig, SimHost
from tests.integration.sshd import SshdServer, have_sshd, isolation_problem


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshdServer]:
    if not have_sshd():
        pytest.skip("OpenSSH server not installed (apt-get install openssh-server)")
    if problem := isolation_problem():  # under CI=true a skip fails (tests/conftest.py)
        pytest.skip(f"the test sshd needs its own PID namespace: {problem}")
    srv = SshdServer(tmp_path_factory.mktemp("sshd")).start()
    yield srv
    srv.kill_remote_processes()
    srv.stop()


@pytest.fixture
def host(sshd: SshdServer) -> Iterator[SshdServer]:
    """The sshd as a test's host: afterwards nothing the test started there may run."""
    yield sshd
    if sshd.proc is None:  # a fault test left it down
        sshd.start()
    left = sshd.wait_no_remote_processes()
    sshd.kill_remote_processes()
    assert not left, f"processes left on the host: {left}"


@pytest.fixture
def ssh(host: SshdServer) -> Callable[..., SshTransport]:
    def make(alias: str = "ct129", config: Path | None = None, **kw: Any) -> SshTransport:
        return SshTransport(alias, config=[str(config or host.ssh_config)], **kw)

    return make


@pytest.fixture
def link(ssh: Callable[..., SshTransport]) -> Callable[..., Link]:
    """A reconnecting link whose backoff is short enough for tests."""

    def make(alias: str = "ct129", **kw: Any) -> Link:
        return Link(lambda: ssh(alias, **kw), Backoff(first=0.1, cap=0.5))

    return make


@pytest.fixture
def sims(host, ssh, tmp_path):
    """Simulated servers launched on the host as a user would (detached); stopped after."""
    made = SimHost(host, ssh, tmp_path)
    yield made
    made.stop()


@pytest.fixture
def rig(host, ssh, tmp_path):
    """A simulated server launched detached, and a session and controller on it (Rig)."""
    made = Rig(host, ssh, tmp_path)
    yield made
    made.cleanup()
