"""vLLM's output streams, written the way a V1 `vllm serve` 0.11.0 writes them.

Each process tags every line it writes to stdout or stderr (vllm.utils
decorate_logs, in cyan: `\\x1b[1;36m(APIServer pid=N)\\x1b[0;0m `), and its
logger records read `INFO 11-24 11:43:54 [file.py:123] message` (no year; the
file and line of the call) under the tag: the API server, the engine core
`(EngineCore_DP0 pid=N)`, tensor-parallel workers `(Worker_TPn pid=N)`. A
multi-line message repeats the whole record prefix on every line (vLLM's
NewLineFormatter), which is how a failing engine's traceback reads. Uvicorn keeps
its own format under the tag (`INFO:     Started server process`). The first line
of every process is the platform notice, untagged: it is printed while vLLM is
imported, before the tag is installed. A tqdm bar (global rank 0 only) goes to
stderr as `\\r` frames: the tag is written when the bar starts a line, so it
reads as a bare tag before the first frame, and a newline ends the bar.
VLLM_LOGGING_LEVEL sets the least level of the records written (default INFO).
"""

from __future__ import annotations

import os

from sgwatch.sim.common.clock import SimClock
from sgwatch.sim.common.writer import DEBUG, ERROR, INFO, WARNING, Streams

LEVELS = {DEBUG: "DEBUG", INFO: "INFO", WARNING: "WARNING", ERROR: "ERROR"}
CYAN, RESET = "\x1b[1;36m", "\x1b[0;0m"
PLATFORM = "Automatically detected platform cuda."
PLATFORM_SRC = "__init__.py:216"


class VllmWriter(Streams):
    def __init__(self, clock: SimClock, tp: int) -> None:
        super().__init__(clock, tp, os.environ.get("VLLM_LOGGING_LEVEL", "info"))
        self.api_pid = os.getpid()
        # The engine core's and workers' pids once the start-up has spawned them.
        self.core_pid = self.api_pid
        self.worker_pids = [self.api_pid] * tp

    # -- process tags -------------------------------------------------------------

    def api_tag(self) -> str:
        return _tag("APIServer", self.api_pid)

    def core_tag(self) -> str:
        return _tag("EngineCore_DP0", self.core_pid)

    def worker_tag(self, rank: int) -> str:
        """tp 1 runs the model inside the engine core; tp > 1 in Worker_TPn processes."""
        if self._tp == 1:
            return self.core_tag()
        return _tag(f"Worker_TP{rank}", self.worker_pids[rank])

    # -- records --------------------------------------------------------------------

    def record(self, tag: str, src: str, message: str, level: int = INFO) -> None:
        """One logger record on stdout; every line of it carries the whole prefix."""
        if level < self._min:
            return
        stamp = self._clock.now().strftime("%m-%d %H:%M:%S")
        head = f"{tag}{LEVELS[level]} {stamp} [{src}] "
        self._write(1, "".join(head + line + "\n" for line in message.split("\n")))

    def api(self, src: str, message: str, level: int = INFO) -> None:
        self.record(self.api_tag(), src, message, level)

    def core(self, src: str, message: str, level: int = INFO) -> None:
        self.record(self.core_tag(), src, message, level)

    def worker(self, rank: int, src: str, message: str, level: int = INFO) -> None:
        self.record(self.worker_tag(rank), src, message, level)

    def platform(self) -> None:
        """The untagged first line each process prints while importing vLLM."""
        if self._min > INFO:
            return
        stamp = self._clock.now().strftime("%m-%d %H:%M:%S")
        self._write(1, f"INFO {stamp} [{PLATFORM_SRC}] {PLATFORM}\n")

    def bar_start(self) -> None:
        """A tqdm bar starts a line on rank 0's stderr: the tag comes first."""
        self._write(2, self.worker_tag(0))

    def tagged(self, tag: str, lines: list[str]) -> None:
        """Plain text a process prints (a traceback) under its tag."""
        self._write(2, "".join(f"{tag}{line}\n" for line in lines))

    # -- uvicorn's lines, under the API server's tag -----------------------------------

    def uvicorn(self, message: str, level: int = INFO) -> None:
        name = LEVELS[level] + ":"
        self._write(2, f"{self.api_tag()}{name:<9} {message}\n")

    def access(self, message: str) -> None:
        self._write(1, f"{self.api_tag()}INFO:     {message}\n")


def _tag(name: str, pid: int) -> str:
    return f"{CYAN}({name} pid={pid}){RESET} "
