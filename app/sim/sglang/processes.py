"""SGLang's process tree and import time, as the simulated server reproduces them.

`python -m sglang.launch_server` spends seconds importing (torch and the rest) before
it parses its arguments, so even a bad flag is reported only then; once its
arguments pass their checks it starts a scheduler process per tensor-parallel rank
(`sglang::scheduler_TP0`, ...; `sglang::scheduler` with one rank) and a detokenizer
(`sglang::detokenizer`).
"""

from __future__ import annotations

import time

from sgwatch.sim.common.proctree import spawn_titled

IMPORT_S = 3.0  # real seconds at --sim-speed 1


def import_time(argv: list[str]) -> None:
    """Sleep as long as SGLang's imports take, scaled by the --sim-speed in argv."""
    time.sleep(IMPORT_S / _speed(argv))


def _speed(argv: list[str]) -> float:
    for i, arg in enumerate(argv):
        value = arg.partition("=")[2] if arg.startswith("--sim-speed=") else None
        if arg == "--sim-speed" and i + 1 < len(argv):
            value = argv[i + 1]
        if value is not None:
            try:
                return max(float(value), 1e-3)
            except ValueError:
                return 1.0  # the parser says what is wrong with it
    return 1.0


def schedulers(tp: int) -> list[str]:
    """The scheduler processes' titles, a rank each: what holds the GPUs."""
    return ["sglang::scheduler"] if tp == 1 else [f"sglang::scheduler_TP{r}" for r in range(tp)]


def spawn(tp: int) -> list[int]:
    """Start the scheduler and detokenizer children; their pids."""
    return spawn_titled([*schedulers(tp), "sglang::detokenizer"])
