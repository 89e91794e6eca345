"""The dashboard over the toy engine's logs (tests/toyengine), the toy registered through
SGWATCH_ENGINES as a user would, the registry read again for these tests alone."""

from __future__ import annotations

import re

import pytest

import sgwatch.engines as engines
from sgwatch.live.watch import Watch
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.widgets.crash import CrashBanner
from sgwatch.ui.widgets.header import HostHeader
from sgwatch.ui.widgets.logview import LogView
from sgwatch.ui.widgets.warmup import WarmupPanel
from tests.conftest import Clock, settle
from tests.toyengine.run import registered, write_log

SIZE = (140, 45)


def reload_registry() -> None:
    engines.all_engines.cache_clear()
    engines._splitters.cache_clear()  # the log prefixes it knows, from the engine list


@pytest.fixture
def toy(monkeypatch):
    """The toy registered, as SGWATCH_ENGINES does at startup; unregistered afterwards."""
    monkeypatch.setenv("SGWATCH_ENGINES", registered()["SGWATCH_ENGINES"])
    reload_registry()
    yield
    monkeypatch.undo()
    reload_registry()


def dashboard(log) -> tuple[SgwatchApp, Clock]:
    w = Watch("toybox")
    w.feed(log.read_bytes())
    w.end()
    clock = Clock()
    return SgwatchApp([w], clock=clock), clock


def text(widget) -> str:
    return str(widget.render())


async def test_a_toy_server_reads_as_serving_with_its_warmup(toy, tmp_path):
    log = write_log(tmp_path / "toy.log", "--model", "tiny/toy-1b", "--decodes", "3")
    app, clock = dashboard(log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        header = text(app.query_one(HostHeader))
        assert header.startswith("toybox  toy  tiny/toy-1b") and "▶ SERVING" in header
        warmup = " ".join(text(s) for s in app.query_one(WarmupPanel).query("Static"))
        assert "✓ Weights" in warmup and "✓ Ready" in warmup
        assert re.search(r"CUDA graphs +off", warmup)  # the phases the toy rules out
        lines = app.query_one(LogView).lines
        assert any("decode: 104.5 tok/s" in line for line in lines)


async def test_a_toy_crash_shows_its_banner_and_reason(toy, tmp_path):
    log = write_log(tmp_path / "toy.log", "--model", "m", "--crash-at", "loading")
    app, clock = dashboard(log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        assert "CRASHED" in text(app.query_one(HostHeader))
        banner = app.query_one(CrashBanner)
        assert banner.display
        assert "RuntimeError: the toy fell over while loading weights" in text(banner)
