import pytest

from sgwatch.sim.demo import start_demo


@pytest.fixture
def demo(monkeypatch):
    d = start_demo(speed=60)
    for key in ("PATH", "SGWATCH_SIM_STATE", "SGWATCH_SIM_GPUS"):
        monkeypatch.setenv(key, d.env[key])
    yield d
    d.stop()
