"""The fleet table as it looks: 20 scripted servers of both engines, one warming, one just
crashed (so marked), one down, one idle; 140 columns in both themes, and grouped by
model at 100 columns. The rows come from bench/fleet_demo.py's source on a clock the
test moves, so every figure and "since" is the same each run.
"""

import time

import pytest

from bench.fleet_demo import ScriptedSource
from sgwatch.ui.fleet_app import FleetApp
from tests.conftest import Clock, until


@pytest.fixture
def utc(monkeypatch):
    """The status line's refresh time is local time: this test's is UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def fleet(theme: str) -> tuple[FleetApp, Clock]:
    clock = Clock()
    source = ScriptedSource(20, clock=clock)
    clock.advance(10)  # the first refresh: one server capturing, another about to crash
    return FleetApp(source, clock=clock, theme=theme, interval_s=0.01), clock


def after_the_crash(app: FleetApp, clock: Clock, keys: tuple[str, ...] = ()):
    async def run_before(pilot) -> None:
        await until(pilot, lambda: app.refreshes >= 1)
        clock.advance(5)  # it crashed meanwhile: its row changed
        seen = app.refreshes
        await until(pilot, lambda: app.refreshes >= seen + 2)
        await pilot.press(*keys)

    return run_before


@pytest.mark.parametrize("theme", ["sgwatch-dark", "sgwatch-light"])
def test_fleet_snapshot(snap_compare, theme, utc):
    app, clock = fleet(theme)
    assert snap_compare(app, terminal_size=(140, 45), run_before=after_the_crash(app, clock))


def test_fleet_grouped_narrow_snapshot(snap_compare, utc):
    app, clock = fleet("sgwatch-dark")
    run_before = after_the_crash(app, clock, ("g",))
    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)
