"""The transport for a target as the user typed it: `localhost` runs locally, anything
else (an ssh alias, `user@host`, `host:port`) goes through SSH."""

from __future__ import annotations

from collections.abc import Sequence

from sgwatch.transport.base import Transport
from sgwatch.transport.local import LocalTransport


def transport_for(
    target: str, *, ssh_config: Sequence[str] | None = None, accept_new_host_key: bool = False
) -> Transport:
    if target == "localhost":
        return LocalTransport(target)
    from sgwatch.transport.ssh import SshTransport  # asyncssh only when SSH is used

    return SshTransport(target, config=ssh_config, accept_new_host_key=accept_new_host_key)
