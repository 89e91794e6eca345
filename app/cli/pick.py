"""Which server a command acts on without asking (`restart`, `bench`): `--pid`, or
the only one running. Guessing among several would act on the wrong one."""

from __future__ import annotations

from sgwatch.cli import exitcodes
from sgwatch.live.choice import described
from sgwatch.remote.discover import ServerProcess


class NotPicked(Exception):
    """No server to act on: `status` is the exit status, `str(e)` says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def pick(servers: list[ServerProcess], pid: int | None, host: str) -> ServerProcess:
    if pid is not None:
        for s in servers:
            if s.pid == pid:
                return s
        running = f"; running:\n{described(servers)}" if servers else "; none runs"
        raise NotPicked(exitcodes.NO_SERVER, f"{host}: no server with pid {pid}{running}")
    if not servers:
        raise NotPicked(exitcodes.NO_SERVER, f"{host}: no server running")
    if len(servers) > 1:
        raise NotPicked(
            exitcodes.AMBIGUOUS,
            f"{len(servers)} servers on {host}; pick one with --pid:\n{described(servers)}",
        )
    return servers[0]
