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
