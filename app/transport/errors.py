"""What can go wrong reaching a host, each with one line a person can act on.

`retry` says whether reconnecting with backoff can help: a wrong host key or a
refused login stays wrong however often we try, so those stop at once.
`answered` says whether the host itself answered (a dropped link, a refused or
reset TCP connection): it is up, so a retry soon is cheap and likely to work.
The commands exit UNREACHABLE (cli/exitcodes.py) for any of them.
"""

from __future__ import annotations


class TransportError(Exception):
    """Base: `str(e)` is the single user-facing line."""

    retry = True
    answered = True


class HostKeyUnknown(TransportError):
    retry = False

    def __init__(self, host: str) -> None:
        self.host = host
        super().__init__(
            f"{host}: host key is not in known_hosts. Check it, then connect once with "
            f"`ssh {host}` or pass --accept-new-host-key to trust it and remember it"
        )


class HostKeyChanged(TransportError):
    retry = False

    def __init__(self, host: str, files: list[str]) -> None:
        self.host = host
        where = ", ".join(files) or "known_hosts"
        super().__init__(
            f"WARNING: {host}: HOST KEY HAS CHANGED: it does not match {where}. Someone may be "
            f"intercepting the connection, or the host was reinstalled. Refusing to connect; "
            f"if the change is expected, remove the old key (ssh-keygen -R) and connect again"
        )


class AuthFailed(TransportError):
    retry = False

    def __init__(self, host: str, detail: str = "") -> None:
        more = f" ({detail})" if detail else ""
        super().__init__(
            f"{host}: login refused{more}: check User and IdentityFile in ~/.ssh/config "
            f"and that `ssh {host}` works"
        )


class HostNotFound(TransportError):
    """DNS failed: usually a typo in the alias or HostName, sometimes a network that is down."""

    answered = False

    def __init__(self, host: str, detail: str = "") -> None:
        super().__init__(f"{host}: host name not found{f' ({detail})' if detail else ''}")


class HostUnreachable(TransportError):
    def __init__(self, host: str, detail: str = "", answered: bool = True) -> None:
        self.answered = answered  # False: no route, no reply (not a refusal)
        super().__init__(f"{host}: cannot connect{f': {detail}' if detail else ''}")


class ConnectTimeout(TransportError):
    answered = False

    def __init__(self, host: str, seconds: float) -> None:
        super().__init__(f"{host}: no answer within {seconds:g} s")


class LinkLost(TransportError):
    """An established connection died (dropped, keepalive unanswered, server gone)."""

    def __init__(self, host: str, detail: str = "") -> None:
        super().__init__(f"{host}: connection lost{f': {detail}' if detail else ''}")


class TooManyChannels(TransportError):
    """More concurrent streams than the server's MaxSessions allows on one connection."""

    retry = False

    def __init__(self, host: str, limit: int) -> None:
        super().__init__(
            f"{host}: at most {limit} concurrent streams per connection (sshd MaxSessions)"
        )
