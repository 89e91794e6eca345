"""The SSH transport (asyncssh), connecting the way `ssh HOST` would.

Settings come from the user's OpenSSH config (~/.ssh/config, or the files
given): HostName, Port, User, IdentityFile, ProxyJump, ServerAlive*,
ConnectTimeout, plus the agent and the default key files. Host keys are always
checked (hostkeys.py). Each ProxyJump hop is opened here, with the same host-key
policy and error messages as the target.

Channels per connection are capped below sshd's MaxSessions (default 10): one
for the shared shell (shell.py), one for a command with input, the rest for
streams. A stream beyond that raises TooManyChannels instead of sshd's bare
"open failed".
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
from collections.abc import Callable, Sequence

import asyncssh

from sgwatch.transport import errors
from sgwatch.transport.base import RunResult, Stream
from sgwatch.transport.guard import guarded, posix
from sgwatch.transport.hostkeys import HostKeyPolicy, PolicyClient
from sgwatch.transport.shell import RemoteShell, ShellDied

# A dead link is noticed after interval x (count + 1) s of silence: 12 s, inside
# the 15 s promised with room for a busy client (5 s x 3 measured 15.0 s). A
# ServerAliveInterval/CountMax in the user's config that notices within 15 s is kept.
KEEPALIVE = (4.0, 2)
DETECT_WITHIN = 15.0
CONNECT_TIMEOUT = 15.0  # when the config sets no ConnectTimeout
MAX_SESSIONS = 10
CLOSE_WAIT = 5.0  # seconds to wait for sshd to confirm a stream's end
MAX_JUMPS = 5
# asyncssh runs chacha20-poly1305 (OpenSSH's first choice) as three cipher
# set-ups a packet in Python; AES-GCM is one OpenSSL call. Following a log
# costs 40 % less CPU with it first (bench/ssh_ingest.py). A Ciphers line in
# the user's config still decides.
CIPHERS = (
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes256-ctr",
    "aes192-ctr",
    "aes128-ctr",
)


def _available(ciphers: Sequence[str]) -> list[str]:
    """Those this asyncssh can run (a FIPS OpenSSL has no chacha20): asyncssh refuses a
    list that names one it lacks, where its own default list skips it."""
    have = {alg.decode() for alg in asyncssh.encryption.get_encryption_algs()}
    return [c for c in ciphers if c in have]


def parse_target(target: str) -> tuple[str, str | None, int | None]:
    """`alias`, `user@host`, `host:port`, `user@[v6addr]:port` -> (host, user, port)."""
    user, _, hostport = target.rpartition("@")
    host, port = hostport, None
    if hostport.startswith("[") and "]" in hostport:
        host, _, rest = hostport[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None
    elif hostport.count(":") == 1:
        h, _, p = hostport.partition(":")
        if p.isdigit():
            host, port = h, int(p)
    return host, user or None, port


def keepalive(interval: float, count: int) -> tuple[float, int]:
    """The user's ServerAliveInterval/CountMax if they notice a drop in time, else ours."""
    if interval and interval * (count + 1) <= DETECT_WITHIN:
        return interval, count
    return KEEPALIVE


class SshTransport:
    def __init__(
        self,
        target: str,
        *,
        config: Sequence[str] | None = None,
        accept_new_host_key: bool = False,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        self.label = target
        self._config = list(config) if config is not None else None
        self._accept_new = accept_new_host_key
        self._max_streams = max_sessions - 2
        self._conns: list[asyncssh.SSHClientConnection] = []  # jump hops first, target last
        self._shell: RemoteShell | None = None
        self._shell_lock = asyncio.Lock()
        self._with_input = asyncio.Semaphore(1)
        self._streams = 0
        self._listeners: list[asyncssh.SSHListener] = []
        self._lost: str | None = None

    @property
    def closed(self) -> bool:
        return not self._conns or self._conns[-1].is_closed()

    async def connect(self) -> None:
        host, user, port = parse_target(self.label)
        try:
            conn = await self._open(self.label, host, user, port, tunnel=None, depth=0)
        except BaseException:
            await self.close()
            raise
        self._lost = None
        self._conns.append(conn)

    async def run(
        self, cmd: str, input: bytes | None = None, timeout: float | None = 30.0
    ) -> RunResult:
        conn = self._conn()
        if input is None:
            shell = await self._get_shell(conn)
            try:
                return await shell.run(cmd, timeout)
            except TimeoutError:  # before OSError, its base class
                await self._kill_group(shell.pgid)
                raise self._timed_out(cmd, timeout) from None
            except (ShellDied, asyncssh.Error, OSError) as e:
                raise self._lost_error(e) from None
        async with self._with_input:
            try:
                r = await conn.run(posix(cmd), input=input, encoding=None, timeout=timeout)
            except asyncssh.TimeoutError:
                raise self._timed_out(cmd, timeout) from None
            except (asyncssh.Error, OSError) as e:
                raise self._lost_error(e) from None
        if r.returncode is None:
            raise self._lost_error()
        return RunResult(r.returncode, r.stdout or b"", r.stderr or b"")

    async def stream(self, cmd: str) -> Stream:
        conn = self._conn()
        if self._streams >= self._max_streams:
            raise errors.TooManyChannels(self.label, self._max_streams)
        try:
            proc = await conn.create_process(guarded(cmd), encoding=None)
        except (asyncssh.Error, OSError) as e:
            raise self._lost_error(e) from None
        self._streams += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released, self._streams = True, self._streams - 1

        async def read(n: int) -> bytes:
            try:
                return await proc.stdout.read(n)
            except (asyncssh.Error, OSError) as e:
                raise self._lost_error(_untraced(e)) from None

        async def read_stderr(n: int) -> bytes:
            try:
                return await proc.stderr.read(n)
            except (asyncssh.Error, OSError) as e:
                _untraced(e)
                return b""  # the stream's end: stdout's read says the link was lost

        async def finish() -> int | None:
            with contextlib.suppress(asyncssh.Error, OSError):
                await proc.wait_closed()
            release()
            return proc.returncode

        async def close() -> None:
            release()
            proc.close()
            # sshd confirms the close once the command exited (the watchdog sees
            # to that); a dead connection never confirms.
            with contextlib.suppress(TimeoutError, asyncssh.Error, OSError):
                async with asyncio.timeout(CLOSE_WAIT):
                    await proc.wait_closed()

        return Stream(read, read_stderr, finish, close, self._lost_error)

    async def forward(self, remote_port: int) -> int:
        try:
            listener = await self._conn().forward_local_port(
                "127.0.0.1", 0, "127.0.0.1", remote_port
            )
        except (asyncssh.Error, OSError) as e:
            raise self._lost_error(e) from None
        self._listeners.append(listener)
        return listener.get_port()

    async def close(self) -> None:
        for listener in self._listeners:
            listener.close()
        self._listeners.clear()
        if self._shell is not None:
            self._shell.close()
            self._shell = None
        for conn in reversed(self._conns):
            conn.close()
            with contextlib.suppress(asyncssh.Error, OSError):
                await conn.wait_closed()
        self._conns.clear()

    # -- internals

    def _conn(self) -> asyncssh.SSHClientConnection:
        if self.closed:
            raise self._lost_error()
        return self._conns[-1]

    def _note_lost(self, reason: str) -> None:
        self._lost = reason  # e.g. "Server not responding to keepalive"

    def _timed_out(self, cmd: str, timeout: float | None) -> TimeoutError:
        return TimeoutError(f"{self.label}: `{cmd}` still running after {timeout} s")

    def _lost_error(self, exc: BaseException | None = None) -> errors.LinkLost:
        detail = self._lost or (str(exc) if exc else "") or "closed"
        return errors.LinkLost(self.label, detail)

    async def _get_shell(self, conn: asyncssh.SSHClientConnection) -> RemoteShell:
        async with self._shell_lock:
            if self._shell is None or self._shell.dead:
                try:
                    proc = await conn.create_process(posix("exec /bin/sh"), encoding=None)
                except (asyncssh.Error, OSError) as e:
                    raise self._lost_error(e) from None
                shell = RemoteShell(proc)
                try:
                    await shell.start()
                except (ShellDied, asyncssh.Error, OSError, TimeoutError) as e:
                    raise self._lost_error(e) from None
                self._shell = shell
            return self._shell

    async def _kill_group(self, pgid: int | None) -> None:
        # The shell ran the command in its own process group; closing the channel
        # alone leaves a command that does not write running (docs/design/ssh.md).
        if pgid is None or self.closed:
            return
        async with self._with_input:
            with contextlib.suppress(asyncssh.Error, OSError, TimeoutError):
                await self._conns[-1].run(f"kill -KILL -- -{pgid}", timeout=10)

    async def _open(
        self,
        label: str,
        host: str,
        user: str | None,
        port: int | None,
        tunnel: asyncssh.SSHClientConnection | None,
        depth: int,
    ) -> asyncssh.SSHClientConnection:
        # () is asyncssh's "the default ~/.ssh/config"; None would load no config at all
        cfg = {"config": () if self._config is None else self._config}
        given = {"username": user} if user else {}
        if port:
            given["port"] = port
        try:
            opts = await asyncssh.SSHClientConnectionOptions.construct(
                None, host=host, **given, **cfg
            )
        except (ValueError, OSError) as e:
            raise errors.HostUnreachable(label, f"bad ssh config: {e}") from None
        if tunnel is None and isinstance(opts.tunnel, str) and opts.tunnel.lower() != "none":
            if depth >= MAX_JUMPS:
                raise errors.HostUnreachable(label, "ProxyJump chain too long")
            for hop in opts.tunnel.split(","):
                h, u, p = parse_target(hop.removeprefix("ssh://"))
                tunnel = await self._open(hop, h, u, p, tunnel, depth + 1)
                self._conns.append(tunnel)
        policy = HostKeyPolicy.from_options(opts, self._accept_new)
        interval, count = keepalive(opts.keepalive_interval, opts.keepalive_count_max)
        timeout = opts.connect_timeout or CONNECT_TIMEOUT
        kwargs = dict(
            known_hosts=policy.lookup,
            client_factory=lambda: _Client(policy, self._note_lost),
            keepalive_interval=interval,
            keepalive_count_max=count,
            connect_timeout=timeout,
            **given,
            **cfg,
        )
        if tunnel is not None:
            kwargs["tunnel"] = tunnel
        if not opts.config.get("Ciphers"):
            kwargs["encryption_algs"] = _available(CIPHERS)
        try:
            conn = await asyncssh.connect(host, **kwargs)
        except asyncssh.HostKeyNotVerifiable:
            if policy.on_file:
                raise errors.HostKeyChanged(label, policy.existing()) from None
            raise errors.HostKeyUnknown(label) from None
        except asyncssh.PermissionDenied as e:
            raise errors.AuthFailed(label, e.reason) from None
        except socket.gaierror as e:
            raise errors.HostNotFound(label, e.strerror or "") from None
        except UnicodeError:
            raise errors.HostNotFound(label, f"{opts.host!r} is not a valid host name") from None
        except TimeoutError:
            raise errors.ConnectTimeout(label, timeout) from None
        except asyncssh.ChannelOpenError as e:  # the jump host could not reach it
            raise errors.HostUnreachable(label, f"via ProxyJump: {e.reason}") from None
        except asyncssh.ConnectionLost as e:
            raise errors.LinkLost(label, e.reason) from None
        except asyncssh.Error as e:
            raise errors.HostUnreachable(label, e.reason) from None
        except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError) as e:
            # only a connection that was made can be reset or broken: a drop
            raise errors.LinkLost(label, e.strerror or str(e)) from None
        except OSError as e:
            answered = e.errno == errno.ECONNREFUSED
            raise errors.HostUnreachable(label, e.strerror or str(e), answered) from None
        policy.remember()
        return conn


class _Client(PolicyClient):
    def __init__(self, policy: HostKeyPolicy, on_lost: Callable[[str], None]) -> None:
        super().__init__(policy)
        self._on_lost = on_lost

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:  # None: we closed it ourselves
            self._on_lost(str(exc))


def _untraced(exc: BaseException) -> BaseException:
    """`exc` without its traceback. asyncssh keeps a lost link's error on the process and
    raises it at every read; the frames its traceback gathers hold the stream and the
    process, a cycle that left each dropped link for a full collection."""
    exc.__traceback__ = None
    return exc
