"""Host key checking as OpenSSH does it, with an explicit accept-new.

Verification is never switched off (no `known_hosts=None`). asyncssh asks
`lookup()` which keys the known_hosts files hold for the host and, when the
server's key is not among them, asks `validate()`: only with accept-new and only
when the files hold nothing for that host do we trust the key, and it is then
appended to the user's known_hosts once the login succeeded. A host whose key
differs from the one on file is refused whatever the flag says.
"""

from __future__ import annotations

import os
from pathlib import Path

import asyncssh

DEFAULT_USER_FILES = ("~/.ssh/known_hosts", "~/.ssh/known_hosts2")
DEFAULT_GLOBAL_FILES = ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")


class HostKeyPolicy:
    def __init__(self, user_files: list[str], global_files: list[str], accept_new: bool) -> None:
        self.user_files = [os.path.expanduser(f) for f in user_files]
        self.files = [*self.user_files, *(os.path.expanduser(f) for f in global_files)]
        self.accept_new = accept_new
        self.on_file: bool | None = None  # None until asyncssh asked
        self.learned: asyncssh.SSHKey | None = None
        self._entry = ""

    @classmethod
    def from_options(
        cls, options: asyncssh.SSHClientConnectionOptions, accept_new: bool
    ) -> HostKeyPolicy:
        """The files OpenSSH would read: UserKnownHostsFile / GlobalKnownHostsFile or defaults."""
        user = list(options.config.get("UserKnownHostsFile", ())) or list(DEFAULT_USER_FILES)
        glob = list(options.config.get("GlobalKnownHostsFile", ())) or list(DEFAULT_GLOBAL_FILES)
        return cls(user, glob, accept_new)

    def existing(self) -> list[str]:
        return [f for f in self.files if os.path.isfile(f) and os.access(f, os.R_OK)]

    def lookup(self, host: str, addr: str, port: int | None) -> tuple:
        existing = self.existing()
        known = asyncssh.read_known_hosts(existing) if existing else asyncssh.SSHKnownHosts()
        keys, ca_keys, revoked, *_ = known.match(host, addr, port)
        self.on_file = bool(keys or ca_keys)
        self._entry = host if port in (None, 22) else f"[{host}]:{port}"
        return keys, ca_keys, revoked

    def validate(self, key: asyncssh.SSHKey) -> bool:
        if self.accept_new and self.on_file is False:
            self.learned = key
            return True
        return False

    def remember(self) -> None:
        """Append the key trusted by accept-new to the first user known_hosts file."""
        if self.learned is None:
            return
        path = Path(self.user_files[0])
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        kind, blob = self.learned.export_public_key("openssh").decode().split()[:2]
        with path.open("a") as f:
            f.write(f"{self._entry} {kind} {blob}\n")
        self.learned = None


class PolicyClient(asyncssh.SSHClient):
    def __init__(self, policy: HostKeyPolicy) -> None:
        self._policy = policy

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        return self._policy.validate(key)
