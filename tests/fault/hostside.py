"""What runs on the "host" during a fault test: a server that numbers its log lines.

`NumberedServer` is a process that discovery takes for an SGLang server (its command
line is `python3 -m sglang.launch_server ...`) and whose stdout, a log file, gets
numbered lines at a steady pace until it is told to stop: a follower that loses,
repeats or reorders a line is caught by comparing what it showed with the file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.integration.helpers import wait_until

# Writes a numbered line every TICK seconds, a burst of BURST at a time; on SIGTERM it
# stops writing, then idles (as a server that went quiet) until SIGKILL.
_PROGRAM = """\
import signal, sys, time
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
n = 0
while not stop:
    for _ in range({burst}):
        sys.stdout.write("[2026-12-01 10:00:00] numbered line %08d\\n" % n)
        n += 1
    sys.stdout.flush()
    time.sleep({tick})
open({done!r}, "w").write(str(n))
while True:
    time.sleep(60)
"""


class NumberedServer:
    def __init__(self, folder: Path, tick: float = 0.02, burst: int = 5) -> None:
        self.folder = folder
        self.log = folder / "server.log"
        self.done = folder / "writer.done"
        pkg = folder / "pkg" / "sglang"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "launch_server.py").write_text(
            _PROGRAM.format(burst=burst, tick=tick, done=str(self.done))
        )
        env = {**os.environ, "PYTHONPATH": str(folder / "pkg")}
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "sglang.launch_server", "--model-path", "numbered/x"],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=env, cwd=folder, start_new_session=True,
            )  # fmt: skip

    @property
    def pid(self) -> int:
        return self.proc.pid

    def finish(self) -> list[str]:
        """Stop writing; the log's lines once the last one is written."""
        self.proc.send_signal(signal.SIGTERM)
        assert wait_until(self.done.exists, 10), "the writer did not stop"
        lines = self.log.read_text().splitlines()
        assert len(lines) == int(self.done.read_text())
        return lines

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(5)
