"""A private OpenSSH sshd on 127.0.0.1 for the integration tests (ssh-notes.md §2).

Own config, host and client keys, free ports, and a generated ssh_config with
Host aliases: `ct129` (direct), `jump129` + `viajump129` (ProxyJump through the
same sshd) and `gpu129` (PATH starts with a folder the test fills, e.g. the
nvidia-smi stand-in). Sessions get a PATH of links to the usual tools without
nvidia-smi, so "a host without nvidia-smi" holds even on a machine with a GPU.
The listener is a child of the test process; every session carries
SSHD_TEST_MARKER=<uuid> (sshd SetEnv), so `remote_processes()` finds whatever
the client left behind on the "host", detached or not.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"  # absolute: sshd re-execs itself
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def have_sshd() -> bool:
    return os.access(SSHD, os.X_OK) and shutil.which("ssh-keygen") is not None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def alive(pid: int) -> bool:
    """Zombies wait for PID 1 to reap them (lazily, ~1 s): they count as dead."""
    return proc_state(pid) not in (None, "Z")


def descendants(pid: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def processes_with_env(assignment: str) -> list[tuple[int, str]]:
    """Live processes whose environment holds `NAME=value`, with their command lines."""
    needle = assignment.encode() + b"\0"
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if needle in (d / "environ").read_bytes() and alive(int(d.name)):
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                out.append((int(d.name), cmd.strip()))
        except OSError:
            continue
    return out


@dataclass
class SshdServer:
    dir: Path
    port: int = field(default_factory=free_port)
    gpu_port: int = field(default_factory=free_port)  # same sshd, PATH starts with gpu_bin
    user: str = field(default_factory=getpass.getuser)
    marker: str = field(default_factory=lambda: uuid.uuid4().hex)
    proc: subprocess.Popen | None = None

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
SetEnv SSHD_TEST_MARKER={self.marker} PATH={self.tools_bin}
LogLevel VERBOSE
Port {self.gpu_port}
Match LocalPort {self.gpu_port}
    SetEnv SSHD_TEST_MARKER={self.marker} PATH={self.gpu_bin}:{self.tools_bin}
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
                [SSHD, "-D", "-e", "-f", cfg],
                stdin=subprocess.DEVNULL,
                stdout=logf,
                stderr=logf,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {self.log.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise TimeoutError(f"sshd not listening on {self.port}")

    def session_pids(self) -> list[int]:
        """Per-connection sshd processes and what they started (not detached ones)."""
        return descendants(self.proc.pid) if self.proc else []

    def kill_connections(self) -> None:
        """Drop every connection as a crashed sshd or a dead network does: the
        per-connection sshd processes die, the commands they ran are not signalled."""
        for pid in self.session_pids():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/comm").read_text().strip() == "sshd":
                    os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        """Stop the listener and drop every connection (a server going down)."""
        if not self.proc:
            return
        self.kill_connections()
        self.proc.terminate()
        self.proc.wait(5)
        self.proc = None

    def sessions_started(self) -> int:
        """Exec channels opened so far: each one starts the user's login shell."""
        return self.log.read_text(errors="replace").count("Starting session: command")

    def remote_processes(self) -> list[tuple[int, str]]:
        """Live processes started through this sshd (the marker is in their environ)."""
        return processes_with_env(f"SSHD_TEST_MARKER={self.marker}")

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
