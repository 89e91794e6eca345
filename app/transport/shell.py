"""One `/bin/sh` kept open per connection for short commands.

Every exec channel starts the user's login shell, and bash sources ~/.bashrc
for commands run by sshd: ~90 ms per command on a host with pyenv
(docs/design/ssh.md). Commands without input go to this shell instead, one
at a time, each in a subshell with stdin from /dev/null and followed by a
sentinel carrying its exit status; a round trip then costs well under a
millisecond. The sentinel holds a random nonce, so command output cannot fake it.
"""

from __future__ import annotations

import asyncio
import secrets
import shlex

from sgwatch.transport.base import CHUNK, RunResult


class ShellDied(Exception):
    """The shell's channel ended (connection lost, or a timeout closed it)."""


class RemoteShell:
    def __init__(self, process) -> None:  # an asyncssh SSHClientProcess, bytes mode
        self._proc = process
        self._nonce = secrets.token_hex(8)
        self._n = 0
        self._lock = asyncio.Lock()
        self.pgid: int | None = None  # its process group: what a timeout kills
        self.dead = False

    async def start(self) -> None:
        r = await self.run("echo $$", timeout=30)
        self.pgid = int(r.stdout)

    async def run(self, cmd: str, timeout: float | None) -> RunResult:
        async with self._lock:
            if self.dead:
                raise ShellDied("shell closed")
            self._n += 1
            mark = f"__sgwatch_{self._nonce}_{self._n}__"
            tag = b"\n" + mark.encode()
            try:
                self._proc.stdin.write(
                    f"( eval {shlex.quote(cmd)} ) </dev/null; "
                    f"printf '\\n%s%d\\n' {mark} $?; printf '\\n%s\\n' {mark} >&2\n".encode()
                )
                async with asyncio.timeout(timeout):
                    (out, status), (err, _) = await asyncio.gather(
                        _until(self._proc.stdout, tag),
                        _until(self._proc.stderr, tag),
                    )
            except BaseException:  # the caller maps a dropped link to its own error
                self.dead = True  # its output is out of step now; never reuse it
                self._proc.close()
                raise
            return RunResult(int(status), out, err)

    def close(self) -> None:
        self.dead = True
        self._proc.close()


async def _until(reader, sentinel: bytes) -> tuple[bytes, bytes]:
    """Bytes before `sentinel`, and what follows it up to the newline."""
    buf = bytearray()
    start = 0
    while True:
        i = buf.find(sentinel, start)
        if i >= 0:
            j = buf.find(b"\n", i + len(sentinel))
            if j >= 0:
                return bytes(buf[:i]), bytes(buf[i + len(sentinel) : j])
        else:
            start = max(0, len(buf) - len(sentinel))
        data = await reader.read(CHUNK)
        if not data:
            raise ShellDied("shell closed")
        buf += data
