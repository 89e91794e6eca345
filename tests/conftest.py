import os
from pathlib import Path

import pytest

from sgwatch.cli.replay import read_log
from sgwatch.core.summary import Summary

FIXTURES = Path(__file__).parent / "fixtures"


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
