"""What runs on the "host" during a fault test: a server that numbers its log lines.

`NumberedServer` is a process that discovery takes for an SGLang server (its command
line is `python3 -m sglang.launch_server ...`) and whose stdout, a log file, gets
numbered lines at a steady pace until it is told to stop: a follower that loses,
repeats or reorders a line is caught by comparing what it showed with the file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.integration.detached import detached
from tests.integration.helpers import wait_until
from tests.integration.sshd import SshdServer

LINE = "[2026-12-01 10:00:00] numbered line %08d"  # the n-th line the server writes
# Writes a numbered line every TICK seconds, a burst of BURST at a time; on SIGTERM it
# stops writing, then idles (as a server that went quiet) until SIGKILL.
_PROGRAM = """\
import signal, sys, time
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
n = 0
while not stop:
    for _ in range({burst}):
        sys.stdout.write({line!r} % n + "\\n")
        n += 1
    sys.stdout.flush()
    time.sleep({tick})
open({done!r}, "w").write(str(n))
while True:
    time.sleep(60)
"""


class NumberedServer:
    """Launched on the host through its sshd (whose sessions may see another pid
    namespace than the tests: the pid is the host's, and signals go through ssh)."""

    def __init__(self, host: SshdServer, folder: Path, tick: float = 0.02, burst: int = 5) -> None:
        self.host = host
        self.log = folder / "server.log"
        self.done = folder / "writer.done"
        pkg = folder / "pkg" / "sglang"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "launch_server.py").write_text(
            _PROGRAM.format(burst=burst, tick=tick, done=str(self.done), line=LINE)
        )
        argv = [sys.executable, "-m", "sglang.launch_server", "--model-path", "numbered/x"]
        env = {"PYTHONPATH": str(folder / "pkg")}
        self.pid = int(self._ssh(detached(argv, str(folder), str(self.log), env)))

    def finish_count(self) -> int:
        """Stop writing; how many lines were written."""
        self._ssh(f"kill -TERM {self.pid}")
        assert wait_until(self.done.exists, 10), "the writer did not stop"
        assert wait_until(lambda: self.done.read_text(), 2)
        return int(self.done.read_text())

    def finish(self) -> list[str]:
        """Stop writing; the log's lines once the last one is written."""
        n = self.finish_count()
        lines = self.log.read_text().splitlines()
        assert lines == [LINE % i for i in range(n)]
        return lines

    def kill(self) -> None:
        self._ssh(f"kill -KILL -- -{self.pid} 2>/dev/null; true")

    def _ssh(self, cmd: str) -> str:
        r = subprocess.run(
            ["ssh", "-F", str(self.host.ssh_config), "ct129", cmd],
            capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        return r.stdout
