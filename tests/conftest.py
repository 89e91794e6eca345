import os
from pathlib import Path

import pytest

from sgwatch.core.summary import Summary
from sgwatch.headless import read_log

FIXTURES = Path(__file__).parent / "fixtures"


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
