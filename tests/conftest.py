import os
import signal
import time
from pathlib import Path

import pytest

from sgwatch.cli.replay import read_log
from sgwatch.core.summary import Summary

FIXTURES = Path(__file__).parent / "fixtures"

# Modules that watch this machine's own processes (localhost, the demo): a server another
# test started at the same time would be seen too. scripts/test runs them alone, after the
# rest has run in parallel (the test hosts are each in their own PID namespace).
SERIAL = (
    "tests/e2e/",
    "tests/fault/test_terminal.py",
    "tests/integration/test_config_effects.py",
    "tests/integration/test_launch.py",
    "tests/integration/test_local.py",
    "tests/k8s/test_fleet_pods.py",  # a whole stand-in cluster each: slow beside others
    "tests/k8s/test_fleet_pods_table.py",
    "tests/ui/test_screens.py",
    "tests/ui/test_server_changes.py",
    "tests/unit/test_local_cancel.py",
    "tests/unit/test_notty.py",
)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared real-log folder named by SGWATCH_LOG_CORPUS (required under CI=true)."""
    folder = os.environ.get("SGWATCH_LOG_CORPUS")
    if not folder:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but SGWATCH_LOG_CORPUS is not set: the corpus tests must run")
        pytest.skip("SGWATCH_LOG_CORPUS is not set (point it at the shared logs folder)")
    path = Path(folder)
    if not path.is_dir():
        pytest.fail(f"SGWATCH_LOG_CORPUS={folder} is not a folder")
    return path


@pytest.fixture
def replay_fixture():
    """Summary of a fixture log under tests/fixtures/, as `sgwatch replay` sees it."""

    def run(name: str) -> Summary:
        with open(FIXTURES / name, "rb") as f:
            return read_log(f)

    return run


def pytest_configure(config) -> None:
    """Processes under test start with SIGINT at its default, however the suite started.

    A shell's background job (`nohup bash -c 'scripts/test' &`) starts with SIGINT
    ignored, and an ignored signal stays ignored across exec: every `sgwatch events` or
    `wait` a test stops with SIGINT would ignore it too. A handler (unlike SIG_IGN) is
    reset to the default at exec, so children see SIGINT as a terminal would send it.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config, items) -> None:
    root = Path(__file__).parent.parent
    for item in items:
        where = item.path.relative_to(root).as_posix()
        if where.startswith(SERIAL):
            item.add_marker(pytest.mark.serial)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI=true nothing the suite needs may be skipped: a skip is a failure."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") == "true" and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true (a needed part is missing): {report.longrepr}"


@pytest.fixture(autouse=True)
def _own_state_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    """Restart histories and caches go to folders of the test run, never the user's."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


async def until(pilot, check, timeout: float = 30.0) -> None:
    """Let the app run until `check()` holds (a frame drawn, a screen open, a worker done)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout} s")
        await pilot.pause(0.05)


class Clock:
    """A clock the test moves: the dashboard's throttles read it instead of waiting."""

    def __init__(self) -> None:
        self.now = 1000.0  # a throttle's "never yet" is 0.0: long ago

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


async def settle(app, pilot, clock: Clock) -> None:
    """Every host pane has drawn all there is (parts deferred by a throttle too),
    moving the clock past each throttle rather than waiting it out."""
    panes = list(app.query("HostPane"))
    deadline = time.monotonic() + 30
    while not all(p.settled for p in panes):
        if time.monotonic() > deadline:
            raise AssertionError("the dashboard did not settle within 30 s")
        clock.advance(5.0)  # past the longest throttle (a chart alone: 4 s)
        await pilot.pause(0.05)
