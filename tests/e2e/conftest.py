import pytest

from sgwatch.sim.demo import start_demo


@pytest.fixture
def demo():
    """The demo's server; its stand-in nvidia-smi is on the PATH of its own transport only
    (cli.dashboard.demo_session), as in `sgwatch --demo`."""
    d = start_demo(speed=60)
    yield d
    d.stop()
