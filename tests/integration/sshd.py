"""A private OpenSSH sshd on 127.0.0.1 for the integration tests (docs/design/ssh.md).

Own config, host and client keys, free ports, and a generated ssh_config with
Host aliases: `ct129` (direct), `jump129` + `viajump129` (ProxyJump through the
same sshd) and `gpu129` (PATH starts with a folder the test fills, e.g. the
nvidia-smi stand-in). Sessions get a PATH of links to the usual tools without
nvidia-smi, so "a host without nvidia-smi" holds even on a machine with a GPU.

The sshd runs as PID 1 of its own PID namespace (`unshare --pid --mount-proc`):
what its sessions see in /proc, and so what discovery finds, is only what went
through it, whatever else runs on the machine; when it stops, the kernel ends
everything in the namespace. Pids that sgwatch reports through it (discovery,
`$!`, a restart's new server) are the namespace's: the `SshdServer` methods that
take a pid (`alive`, `kill`, `killpg`, `cmdline`, `environ`, `cwd`, `ids`) take
those and translate; the module-level helpers are for this machine's own pids.
"""

from __future__ import annotations

import contextlib
import functools
import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import psutil

SSHD = "/usr/sbin/sshd"  # absolute: sshd re-execs itself
UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def have_sshd() -> bool:
    return os.access(SSHD, os.X_OK) and shutil.which("ssh-keygen") is not None


@functools.cache
def isolation_problem() -> str | None:
    """Why the sshd cannot get its own PID namespace here, or None."""
    if shutil.which("unshare") is None:
        return "unshare not found (apt-get install util-linux)"
    r = subprocess.run([*UNSHARE, "true"], capture_output=True, text=True)
    if r.returncode:
        return f"`{' '.join(UNSHARE)} true` fails (it needs root): {r.stderr.strip()}"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(pid: int) -> bool:
    """Zombies wait for their parent to reap them (lazily, ~1 s): they count as dead."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


def environ(pid: int) -> dict[str, str]:
    items = Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0")
    return dict(i.split("=", 1) for i in items if "=" in i)


def children(pid: int, recursive: bool = False) -> list[int]:
    """Its children (whichever of its threads forked them), and theirs if `recursive`."""
    try:
        return [c.pid for c in psutil.Process(pid).children(recursive=recursive)]
    except psutil.NoSuchProcess:
        return []


def descendants(pid: int) -> list[int]:
    return children(pid, recursive=True)


def command(pid: int) -> str:
    """Its command line as `ps` shows it (never fails on odd bytes)."""
    return (
        Path(f"/proc/{pid}/cmdline")
        .read_bytes()
        .replace(b"\0", b" ")
        .decode(errors="replace")
        .strip()
    )


def processes_with_env(assignment: str) -> list[tuple[int, str]]:
    """Live processes whose environment holds `NAME=value`, with their command lines."""
    name, _, value = assignment.partition("=")
    return [
        (p.pid, " ".join(p.info["cmdline"] or ()))
        for p in psutil.process_iter(["environ", "cmdline", "status"])
        if (p.info["environ"] or {}).get(name) == value and p.info["status"] != psutil.STATUS_ZOMBIE
    ]


def is_sshd(pid: int) -> bool:
    """sshd itself: the listener or a connection's (`sshd-session` from OpenSSH 9.8)."""
    return Path(f"/proc/{pid}/comm").read_text().strip() in ("sshd", "sshd-session")


class HostProcess(NamedTuple):
    """A process in the sshd's namespace: its ids there, and its pid out here."""

    pid: int
    pgid: int
    sid: int
    outside: int


def _ids(status: str, key: str) -> list[int]:
    for line in status.splitlines():
        if line.startswith(key + ":"):
            return [int(x) for x in line.split()[1:]]
    return []


@dataclass
class SshdServer:
    dir: Path
    port: int = field(default_factory=free_port)
    gpu_port: int = field(default_factory=free_port)  # same sshd, PATH starts with gpu_bin
    user: str = field(default_factory=getpass.getuser)
    proc: subprocess.Popen | None = None  # unshare, outside the namespace
    init: int = 0  # the sshd listener: the namespace's PID 1, by its pid out here
    namespace: str = ""  # readlink /proc/PID/ns/pid of everything in it

    @property
    def ssh_config(self) -> Path:
        return self.dir / "ssh_config"

    @property
    def known_hosts(self) -> Path:
        return self.dir / "known_hosts"

    @property
    def host_key(self) -> Path:
        return self.dir / "ssh_host_ed25519_key"

    @property
    def client_key(self) -> Path:
        return self.dir / "id_ed25519"

    @property
    def gpu_bin(self) -> Path:
        """First on PATH for sessions through the `gpu129` alias."""
        return self.dir / "gpubin"

    @property
    def tools_bin(self) -> Path:
        return self.dir / "bin"

    @property
    def log(self) -> Path:
        return self.dir / "sshd.log"

    def host_key_line(self) -> str:
        kind, blob = self.host_key.with_suffix(".pub").read_text().split()[:2]
        return "".join(f"[127.0.0.1]:{p} {kind} {blob}\n" for p in (self.port, self.gpu_port))

    def client_config(self, known_hosts: Path, extra: str = "") -> str:
        common = f"""\
    HostName 127.0.0.1
    User {self.user}
    IdentityFile {self.client_key}
    IdentitiesOnly yes
    UserKnownHostsFile {known_hosts}
    GlobalKnownHostsFile /dev/null
    ServerAliveInterval 2
    ServerAliveCountMax 3
    ConnectTimeout 5
{extra}"""
        return (
            f"Host ct129 jump129\n    Port {self.port}\n{common}\n"
            f"Host viajump129\n    Port {self.port}\n    ProxyJump jump129\n{common}\n"
            f"Host gpu129\n    Port {self.gpu_port}\n{common}"
        )

    def write_client_config(self, path: Path, known_hosts: Path, extra: str = "") -> Path:
        path.write_text(self.client_config(known_hosts, extra))
        return path

    def _write_files(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.gpu_bin.mkdir(exist_ok=True)
        self._link_tools()
        for key in (self.host_key, self.client_key):
            if not key.exists():
                subprocess.run(
                    ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True
                )
        auth = self.dir / "authorized_keys"
        auth.write_text(self.client_key.with_suffix(".pub").read_text())
        # Each login runs this machine's ~/.bashrc; a version manager's rehash there
        # waits up to a minute on a lock a killed login left (PYENV_REHASH_TIMEOUT: 1 s).
        # LogLevel VERBOSE logs one "Starting session" per exec channel: the
        # tests count shell start-ups with it.
        (self.dir / "sshd_config").write_text(f"""\
ListenAddress 127.0.0.1
Port {self.port}
HostKey {self.host_key}
PidFile {self.dir}/sshd.pid
AuthorizedKeysFile {auth}
AllowUsers {self.user}
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
UseDNS no
PrintMotd no
PrintLastLog no
ClientAliveInterval 5
ClientAliveCountMax 3
SetEnv PATH={self.tools_bin} SGWATCH_LOCK_DIR={self.dir} PYENV_REHASH_TIMEOUT=1
LogLevel VERBOSE
Port {self.gpu_port}
Match LocalPort {self.gpu_port}
    SetEnv PATH={self.gpu_bin}:{self.tools_bin} SGWATCH_LOCK_DIR={self.dir} PYENV_REHASH_TIMEOUT=1
""")
        self.write_client_config(self.ssh_config, self.known_hosts)
        self.known_hosts.write_text(self.host_key_line())

    def _link_tools(self) -> None:
        self.tools_bin.mkdir(exist_ok=True)
        for folder in DEFAULT_PATH.split(":"):
            if not os.path.isdir(folder):
                continue
            for name in os.listdir(folder):
                link = self.tools_bin / name
                if name != "nvidia-smi" and not os.path.lexists(link):
                    link.symlink_to(os.path.join(folder, name))

    def start(self, timeout: float = 10.0) -> SshdServer:
        if os.geteuid() == 0:  # privilege separation dir, compiled in
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        self._write_files()
        cfg = str(self.dir / "sshd_config")
        subprocess.run([SSHD, "-t", "-f", cfg], check=True)
        with open(self.log, "ab") as logf:
            self.proc = subprocess.Popen(
                [*UNSHARE, SSHD, "-D", "-e", "-f", cfg],
                stdin=subprocess.DEVNULL,
                stdout=logf,
                stderr=logf,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {self.log.read_text()[-2000:]}")
            # unshare's one child is the sshd, in the namespace from its fork on
            if not self.init and (kids := children(self.proc.pid)):
                self.init = kids[0]
                self.namespace = os.readlink(f"/proc/{self.init}/ns/pid")
            with contextlib.suppress(OSError):
                if self.init:
                    socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                    return self
            time.sleep(0.05)
        raise TimeoutError(f"sshd not listening on {self.port}")

    def session_pids(self) -> list[int]:
        """Per-connection sshd processes and what they started, not detached ones
        (those the listener inherited), by their pids out here."""
        out = []
        for pid in children(self.init) if self.proc else []:
            with contextlib.suppress(OSError):
                if is_sshd(pid):
                    out += [pid, *descendants(pid)]
        return out

    def kill_connections(self) -> None:
        """Drop every connection as a crashed sshd or a dead network does: the
        per-connection sshd processes die, the commands they ran are not signalled."""
        for pid in self.session_pids():
            with contextlib.suppress(OSError):
                if is_sshd(pid):
                    os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        """The host goes down: connections drop and, the listener being the namespace's
        PID 1, everything started through it ends (the kernel kills it)."""
        if not self.proc:
            return
        self.kill_connections()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.init, signal.SIGTERM)  # unshare itself ignores SIGTERM
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # --kill-child: the listener gets SIGKILL
            self.proc.wait(5)
        self.proc, self.init, self.namespace = None, 0, ""

    def sessions_started(self) -> int:
        """Exec channels opened so far: each one starts the user's login shell."""
        return self.log.read_text(errors="replace").count("Starting session: command")

    def processes(self) -> list[HostProcess]:
        """Every process in the namespace, the listener (pid 1) included."""
        out = []
        for d in os.scandir("/proc"):
            if not d.name.isdigit():
                continue
            try:
                status = Path(d.path, "status").read_text()
                nspid = _ids(status, "NSpid")
                # one level: in this process's namespace; deeper: check which
                if len(nspid) > 1 and os.readlink(f"{d.path}/ns/pid") == self.namespace:
                    pgid, sid = _ids(status, "NSpgid")[-1], _ids(status, "NSsid")[-1]
                    out.append(HostProcess(nspid[-1], pgid, sid, int(d.name)))
            except (OSError, IndexError, ValueError):
                continue
        return out

    def process(self, pid: int) -> HostProcess:
        """The host's process `pid` (a pid as sgwatch reports it); ProcessLookupError if none."""
        for p in self.processes():
            if p.pid == pid:
                return p
        raise ProcessLookupError(f"no process {pid} on the test host")

    def outside_pid(self, pid: int) -> int:
        return self.process(pid).outside

    def alive(self, pid: int) -> bool:
        try:
            return alive(self.outside_pid(pid))
        except ProcessLookupError:
            return False

    def ids(self, pid: int) -> tuple[int, int]:
        """(process group, session) of the host's `pid`, as the host numbers them."""
        p = self.process(pid)
        return p.pgid, p.sid

    def kill(self, pid: int, sig: int) -> None:
        os.kill(self.outside_pid(pid), sig)

    def killpg(self, pgid: int, sig: int) -> None:
        """Signal the host's process group `pgid`, even once its leader is gone."""
        members = [p.outside for p in self.processes() if p.pgid == pgid]
        if not members:
            raise ProcessLookupError(f"no process group {pgid} on the test host")
        os.killpg(os.getpgid(members[0]), sig)

    def cmdline(self, pid: int) -> list[str]:
        return cmdline(self.outside_pid(pid))

    def environ(self, pid: int) -> dict[str, str]:
        return environ(self.outside_pid(pid))

    def cwd(self, pid: int) -> Path:
        return Path(f"/proc/{self.outside_pid(pid)}/cwd").readlink()

    def children(self, pid: int) -> list[int]:
        inside = {p.outside: p.pid for p in self.processes()}
        return [inside[c] for c in children(self.outside_pid(pid)) if c in inside]

    def remote_processes(self) -> list[tuple[int, str]]:
        """Live processes started through this sshd, sshd's own left out: (their pid
        out here, command line)."""
        out = []
        for p in self.processes():
            with contextlib.suppress(OSError):
                if alive(p.outside) and not is_sshd(p.outside):
                    out.append((p.outside, command(p.outside)))
        return out

    def wait_no_remote_processes(self, timeout: float = 5.0) -> list[tuple[int, str]]:
        deadline = time.monotonic() + timeout
        while (left := self.remote_processes()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return left

    def kill_remote_processes(self) -> list[tuple[int, str]]:
        procs = self.remote_processes()
        for pid, _ in procs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return procs
