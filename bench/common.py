"""What the SSH benches share: the test sshd for one bench, a long server log on it,
and a session following that log as the dashboard does (`--log`, so no discovery)."""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

from parse import make_log

from sgwatch.live.options import Options
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.transport.ssh import SshTransport
from tests.integration.sshd import SshdServer


@contextlib.contextmanager
def sshd() -> Iterator[tuple[SshdServer, Path]]:
    """The test sshd on loopback and a scratch folder; what the bench left running on the
    'host' is killed and the server stopped afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        srv = SshdServer(Path(tmp) / "sshd").start()
        try:
            yield srv, Path(tmp)
        finally:
            srv.kill_remote_processes()
            srv.stop()


def long_log_options(doc: str) -> argparse.Namespace:
    """--mb (the long log's size) and --repeat, for a bench whose docstring is `doc`."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=1000, help="log size in MB")
    ap.add_argument("--repeat", type=int, default=3)
    return ap.parse_args()


def long_log(path: Path, mb: int) -> Path:
    """A server log of about `mb` MB at `path`: one run's lines (bench/parse.py) repeated."""
    block = make_log(100_000)
    with path.open("wb") as f:
        for _ in range(max(1, mb * 10**6 // len(block))):
            f.write(block)
    return path


def session_on(srv: SshdServer, watch: Watch, log: Path, options: Options | None = None) -> Session:
    """A session that follows `log` on the test sshd's host into `watch`."""
    make = lambda: SshTransport("ct129", config=[str(srv.ssh_config)])  # noqa: E731
    return Session(watch, make, log=str(log), options=options or Options())
