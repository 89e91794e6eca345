"""The simulated GPUs, shared by the simulated servers and the nvidia-smi stand-in.

Each server owns one small JSON file, `<state dir>/<pid>.json`, rewritten
atomically (write, then rename) when its GPU use changes; the stand-in reads
them all. One file per server means no locks, and the file of a process that
is gone (SIGKILL leaves it behind) is ignored and removed by the next reader.
Memory is published as a ramp (from, to, over a wall-clock interval), so the
stand-in shows memory rising while weights load without the server writing on
every tick.

The cards come from the environment, so servers and stand-in agree on them:
SGWATCH_SIM_GPUS (count, default 8), SGWATCH_SIM_GPU_NAME, SGWATCH_SIM_GPU_MEM_MIB.
SGWATCH_SIM_STATE names the state folder (default: per user, under the temp dir).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

IDLE_MIB = 18  # what an idle card reports (shared nvidia-smi samples)
IDLE_W = 70.0
STATE_ENV = "SGWATCH_SIM_STATE"


_DEFAULT_COUNT, _DEFAULT_NAME, _DEFAULT_MIB = 8, "NVIDIA H100 80GB HBM3", 81559


@dataclass(frozen=True, slots=True)
class GpuSpec:
    count: int = _DEFAULT_COUNT
    name: str = _DEFAULT_NAME
    mem_mib: int = _DEFAULT_MIB
    power_limit_w: float = 700.0

    @property
    def mem_gib(self) -> float:
        return self.mem_mib / 1024

    @classmethod
    def from_env(cls) -> GpuSpec:
        env = os.environ
        return cls(
            count=int(env.get("SGWATCH_SIM_GPUS", _DEFAULT_COUNT)),
            name=env.get("SGWATCH_SIM_GPU_NAME", _DEFAULT_NAME),
            mem_mib=int(env.get("SGWATCH_SIM_GPU_MEM_MIB", _DEFAULT_MIB)),
        )


def uuid(index: int) -> str:
    h = hashlib.md5(f"sgwatch-sim-gpu-{index}".encode()).hexdigest()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def bus_id(index: int) -> str:
    return f"00000000:{0x18 + 0x10 * index:02X}:00.0"


def state_dir() -> Path:
    folder = os.environ.get(STATE_ENV) or os.path.join(
        tempfile.gettempdir(), f"sgwatch-sim-{os.getuid()}"
    )
    return Path(folder)


@dataclass(slots=True)
class Ramp:
    start: float  # wall-clock epoch seconds
    end: float
    from_mib: float
    to_mib: float

    def at(self, t: float) -> float:
        if t >= self.end or self.end <= self.start:
            return self.to_mib
        if t <= self.start:
            return self.from_mib
        return self.from_mib + (self.to_mib - self.from_mib) * (t - self.start) / (
            self.end - self.start
        )


class Publisher:
    """One server's GPU use: memory ramps per card, one utilisation for all."""

    def __init__(self, gpus: list[int], proc_names: list[str]) -> None:
        self._folder = state_dir()
        self._path = self._folder / f"{os.getpid()}.json"
        self._gpus = gpus
        self._names = proc_names
        self._ramps = {g: Ramp(0.0, 0.0, 0.0, 0.0) for g in gpus}
        self._util = 0.0

    def ramp(self, rank: int, to_mib: float, start: float, end: float) -> None:
        """Memory of the rank's card goes to `to_mib` between two wall-clock times."""
        gpu = self._gpus[rank]
        now = self._ramps[gpu].at(start)
        self._ramps[gpu] = Ramp(start, end, now, to_mib)
        self._write()

    def util(self, percent: float) -> None:
        if percent != self._util:
            self._util = percent
            self._write()

    def remove(self) -> None:
        self._path.unlink(missing_ok=True)

    def _write(self) -> None:
        doc = {
            "pid": os.getpid(),
            "util": self._util,
            "gpus": {
                str(g): {"mem": [r.start, r.end, r.from_mib, r.to_mib], "proc": self._names[i]}
                for i, (g, r) in enumerate(self._ramps.items())
            },
        }
        self._folder.mkdir(parents=True, exist_ok=True)
        tmp = self._path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, self._path)


@dataclass(slots=True)
class App:
    pid: int
    name: str
    gpu: int
    used_mib: float


@dataclass(slots=True)
class Card:
    index: int
    name: str
    total_mib: int
    used_mib: float = IDLE_MIB
    util: float = 0.0
    apps: list[App] = field(default_factory=list)

    @property
    def power_w(self) -> float:
        busy = 40.0 if self.used_mib > IDLE_MIB + 100 else 0.0
        return IDLE_W + busy + 5.6 * self.util

    @property
    def temp_c(self) -> int:
        return round(31 + 0.45 * self.util + (3 if self.used_mib > IDLE_MIB + 100 else 0))


def read(spec: GpuSpec, now: float | None = None) -> list[Card]:
    """Every card as the live simulated servers leave it at wall time `now`."""
    now = time.time() if now is None else now
    cards = [Card(i, spec.name, spec.mem_mib) for i in range(spec.count)]
    folder = state_dir()
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not _alive(doc.get("pid", 0)):
            path.unlink(missing_ok=True)
            continue
        for gpu, entry in doc["gpus"].items():
            index = int(gpu)
            if index >= len(cards):
                continue
            card = cards[index]
            used = Ramp(*entry["mem"]).at(now)
            card.used_mib = min(card.total_mib, card.used_mib + used)
            card.util = min(100.0, card.util + doc["util"])
            if used > 0:
                card.apps.append(App(doc["pid"], entry["proc"], index, used))
    return cards


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
