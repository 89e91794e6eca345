"""The dashboard empties Textual's and Rich's memo caches on a timer: they fill for hours
otherwise (docs/RELIABILITY.md, the soak)."""

from __future__ import annotations

from rich._unicode_data import load
from textual.actions import parse
from textual.geometry import Region

from sgwatch.live.watch import Watch
from sgwatch.ui import memos
from sgwatch.ui.app import SgwatchApp
from tests.conftest import until


def _fill(count: int = 50) -> None:
    for n in range(count):
        Region(0, 0, n + 1, 1).union(Region(n, 0, 1, 1))


def test_clear_empties_bounded_caches_and_keeps_data_loads():
    _fill()
    held = load.cache_info().currsize
    assert Region.union.cache_info().currsize >= 50
    assert memos.clear() >= 50
    assert Region.union.cache_info().currsize == 0
    assert load.cache_info().currsize == held


def test_parsed_actions_are_kept():
    # the app's own action strings: a fixed few, each parsed again left a cycle
    parse("tab(3)")
    memos.clear()
    assert parse.cache_info().currsize >= 1


async def test_the_dashboard_empties_them_on_its_timer():
    app = SgwatchApp([Watch("ct129")])
    app.MEMO_CLEAR_S = 0.3
    async with app.run_test(size=(100, 30)) as pilot:
        _fill(400)
        assert Region.union.cache_info().currsize >= 400
        # What the app itself unites between two frames is far fewer than what was there.
        await until(pilot, lambda: Region.union.cache_info().currsize < 100, timeout=10)
