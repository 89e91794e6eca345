import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sgwatch.sim.common.nvidia_smi import install
from tests.sim.scenarios import SCENARIOS, Result, run_all
from tests.sim.simproc import Sim, sim_env


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """A private GPU state folder, shared by this test's servers and nvidia-smi."""
    return tmp_path / "gpu-state"


@pytest.fixture
def launch(tmp_path: Path, state_dir: Path) -> Iterator[Callable[..., Sim]]:
    """Start simulators for one test; every one still running is killed afterwards."""
    started: list[Sim] = []

    def start(*args: str, entry: str = "sgwatch.sim", env: dict[str, str] | None = None) -> Sim:
        sim = Sim(list(args), tmp_path, {**sim_env(state_dir), **(env or {})}, entry)
        started.append(sim)
        return sim

    yield start
    for sim in started:
        sim.close()


@dataclass
class Smi:
    """`nvidia-smi` as found first on PATH: the stand-in, reading this test's GPUs."""

    path: Path
    env: dict[str, str]

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        if any(a.startswith("--query") for a in args) and not any(
            a.startswith("--format") for a in args
        ):
            args = (*args, "--format=csv")
        return subprocess.run(
            ["nvidia-smi", *args], env=self.env, capture_output=True, text=True, timeout=30
        )


@pytest.fixture
def smi(tmp_path: Path, state_dir: Path) -> Smi:
    path = install(tmp_path / "bin", state_dir)
    env = {**os.environ, "PATH": f"{path.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    assert shutil.which("nvidia-smi", path=env["PATH"]) == str(path)
    return Smi(path, env)


@pytest.fixture(scope="session")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    """Every scenario run once per session; tests read their logs and outcomes."""
    return run_all(SCENARIOS, tmp_path_factory.mktemp("scenarios"))
