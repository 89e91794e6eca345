"""A session's real Prometheus (Debian's package) on loopback, scraping simulated
SGLang and vLLM servers and the simulated dcgm-exporter every second.

Each test reads its own job of targets (rig.py writes them); under CI=true a missing
`prometheus` fails (tests/conftest.py turns the skip into a failure).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fleet.fakeapi import Fake
from tests.fleet.rig import Prometheus, prometheus_binary, start_dcgm, start_sim, wait_metrics
from tests.sim.simproc import Sim, sim_env

GPUS = 2  # cards of the simulated node
GPU_MIB = 81559
NODE = "simnode"  # the dcgm stand-in's Hostname


@pytest.fixture(scope="session")
def prometheus_bin() -> str:
    binary = prometheus_binary()
    if binary is None:
        pytest.skip("prometheus is not installed (scripts/test installs Debian's package)")
    return binary


@pytest.fixture(scope="session")
def prometheus(
    prometheus_bin: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Prometheus]:
    prom = Prometheus.start(tmp_path_factory.mktemp("prometheus"), prometheus_bin)
    yield prom
    prom.stop()


@dataclass
class Servers:
    """Simulated servers of both engines, scraped as job `both`; the GPUs as job `gpu`."""

    busy: dict[str, Sim]  # engine -> a server generating all session long
    idle: Sim  # a vLLM server with nothing to do
    folder: Path
    env: dict[str, str]

    @property
    def all(self) -> list[Sim]:
        return [*self.busy.values(), self.idle]


def _load(sim: Sim, stop: threading.Event) -> None:
    """One long streamed request after another, until `stop`."""
    body = {"model": "m", "prompt": "hello", "max_tokens": 100000, "stream": True}
    while not stop.is_set():
        with contextlib.suppress(OSError, AssertionError):
            for _ in sim.stream("/v1/completions", body):
                if stop.is_set():
                    return


@pytest.fixture(scope="session")
def servers(prometheus: Prometheus, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    folder = tmp_path_factory.mktemp("fleet")
    env = {**sim_env(folder / "gpus"), "SGWATCH_SIM_GPUS": str(GPUS)}
    slow = ("--sim-tok-s", "0.1")  # ~30 tok/s in real time at 300x: light on the CPU
    made = Servers(
        {e: start_sim(e, folder, env, *slow) for e in ("sglang", "vllm")},
        start_sim("vllm", folder, env),
        folder,
        env,
    )
    dcgm, dcgm_port = start_dcgm(env, NODE, folder)
    stop = threading.Event()
    try:
        for sim in made.all:
            wait_metrics(sim)
        for sim in made.busy.values():
            threading.Thread(target=_load, args=(sim, stop), daemon=True).start()
        prometheus.targets("both", [s.port for s in made.all])
        prometheus.targets("gpu", [dcgm_port])
        yield made
    finally:
        stop.set()
        dcgm.kill()
        dcgm.wait(10)
        for sim in made.all:
            sim.close()


@pytest.fixture
def fake() -> Iterator[Fake]:
    """A stand-in query API answering `fake.answer`."""
    made = Fake()
    yield made
    made.server.shutdown()
    made.server.server_close()
