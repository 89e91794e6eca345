"""The fleet table as a person drives it: rows in from a source, keys in, what it shows out.

The source is a FleetSource of the test's own that answers scripted snapshots (the
real Prometheus source has its own tests); the host a row opens is a Watch fed from
a sample log.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from textual.widgets import Input, Static, TabbedContent

from sgwatch.fleet.row import FleetRow
from sgwatch.fleet.source import FleetSnapshot
from sgwatch.ui.fleet_app import FleetApp
from sgwatch.ui.fleet_cells import SORTS, ordered
from sgwatch.ui.fleet_table import FleetView
from sgwatch.ui.host_screen import HostScreen, OpenedHost
from sgwatch.ui.hostpane import HostPane
from sgwatch.ui.overview import Overview
from sgwatch.ui.widgets.header import HostHeader
from tests.conftest import Clock, until
from tests.ui.test_dashboard import SAMPLE, dashboard, text, watch_of

SIZE = (140, 45)
T0 = 1000.0

A = FleetRow("a:30000", "a:30000", "serving", "sglang", "Qwen/Qwen3-32B", "sglang-prod", "gpu-a",
             gen_tok_s=2400.0, running=24, waiting=1, kv_pct=41.0, changed_at=T0 - 120)  # fmt: skip
B = FleetRow("b:8000", "b:8000", "warming", "vllm", "meta-llama/Llama-3.1-8B", "vllm-prod",
             "gpu-b", detail="graphs 12/36 ETA 20s", changed_at=T0 - 30)  # fmt: skip
C = FleetRow("c:8000", "c:8000", "crashed", "vllm", "Qwen/Qwen3-32B", "vllm-prod", None,
             detail="CUDA out of memory", changed_at=T0 - 5)  # fmt: skip
ROWS = (A, B, C)


class Script:
    """Answers its snapshots in turn, then the last one again; counts overlapping calls."""

    name = "test"

    def __init__(self, *snapshots: FleetSnapshot, delay: float = 0.0) -> None:
        self.snapshots, self.delay = list(snapshots), delay
        self.calls = self.running = self.most_at_once = 0
        self.closed = False

    async def snapshot(self) -> FleetSnapshot:
        self.calls += 1
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            await asyncio.sleep(self.delay)
            return self.snapshots.pop(0) if len(self.snapshots) > 1 else self.snapshots[0]
        finally:
            self.running -= 1

    async def close(self) -> None:
        self.closed = True


def snap(*rows: FleetRow, **kwargs) -> FleetSnapshot:
    return FleetSnapshot(tuple(rows), fetched_at=T0, **kwargs)


def fleet(source: Script, **kwargs) -> tuple[FleetApp, Clock]:
    clock = Clock()
    clock.now = T0
    return FleetApp(source, clock=clock, interval_s=0.02, **kwargs), clock


def order(app: FleetApp) -> list[str]:
    return list(app.view.table._order)


def shown(app: FleetApp, key: str, column: str) -> str:
    return app.view.table.text(key, column)


async def test_rows_show_state_figures_and_since_sorted_problems_first():
    app, _ = fleet(Script(snap(*ROWS)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refreshes >= 1)
        assert order(app) == ["c:8000", "b:8000", "a:30000"]  # by state: crashed first
        assert shown(app, "c:8000", "state") == "✗ crashed · CUDA out of memory"
        assert shown(app, "b:8000", "state") == "◆ graphs 12/36 ETA 20s"
        assert shown(app, "a:30000", "state") == "▶ serving"
        assert shown(app, "a:30000", "tok/s") == "2,400"
        assert shown(app, "a:30000", "run/wait") == "24/1"
        assert shown(app, "a:30000", "KV") == "41%"
        assert shown(app, "a:30000", "model") == "Qwen3-32B"
        assert shown(app, "a:30000", "since") == "2m00s"
        status = text(app.query_one("#fleet-status"))
        assert "3 servers: 1 crashed · 1 warming · 1 serving" in status
        await pilot.press("down")  # the warming row: the line under the table says it whole
        detail = "b:8000 → ssh gpu-b: ◆ warming · graphs 12/36 ETA 20s"
        await until(pilot, lambda: text(app.query_one("#fleet-detail")) == detail)


def test_instances_sort_with_their_numbers_as_numbers():
    rows = [replace(A, key=k, instance=k) for k in ("10.0.0.10:8000", "10.0.0.9:8000", "gpu2")]
    by_instance = next(s for s in SORTS if s.name == "instance")
    assert [r.instance for r in ordered(rows, by_instance, reverse=False)] == [
        "10.0.0.9:8000", "10.0.0.10:8000", "gpu2",
    ]  # fmt: skip


async def test_sort_key_cycles_and_reverses():
    app, _ = fleet(Script(snap(*ROWS)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refreshes >= 1)
        await pilot.press("s")  # state -> instance
        assert order(app) == ["a:30000", "b:8000", "c:8000"]
        await pilot.press("S")
        assert order(app) == ["c:8000", "b:8000", "a:30000"]
        assert "sort instance ↑" in text(app.query_one("#fleet-status"))


async def test_filter_with_slash_keeps_matching_rows_and_escape_drops_it():
    app, _ = fleet(Script(snap(*ROWS)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refreshes >= 1)
        await pilot.press("slash")
        await until(pilot, lambda: app.focused is app.query_one("#filter", Input))
        await pilot.press(*"vllm")
        assert order(app) == ["c:8000", "b:8000"]  # the engine matched
        await pilot.press("enter")  # the filter stays, the keys go to the table again
        assert app.focused is app.view.table
        assert "2 shown" in text(app.query_one("#fleet-status"))
        await pilot.press("slash")
        await until(pilot, lambda: app.focused is app.query_one("#filter", Input))
        await pilot.press("escape")
        assert len(order(app)) == 3
        await pilot.press("slash", *"vllm", "enter", "escape")  # from the table too
        assert len(order(app)) == 3 and app.focused is app.view.table


async def test_group_by_model_then_by_job():
    app, _ = fleet(Script(snap(*ROWS)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refreshes >= 1)
        await pilot.press("g")
        assert order(app) == [
            "group:Llama-3.1-8B", "b:8000", "group:Qwen3-32B", "c:8000", "a:30000",
        ]  # fmt: skip
        assert shown(app, "group:Qwen3-32B", "state") == "2 · ✗1 ▶1"
        await pilot.press("g")
        assert order(app)[0] == "group:sglang-prod" and order(app)[2] == "group:vllm-prod"
        await pilot.press("g")
        assert not any(k.startswith("group:") for k in order(app))


async def test_a_changed_row_is_marked_for_a_while():
    warming = replace(A, state="warming", detail="weights 3/8")
    app, clock = fleet(Script(snap(warming, B), snap(A, B)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refreshes >= 2)
        assert shown(app, "a:30000", "") == "●"  # warming -> serving
        assert shown(app, "b:8000", "") == ""
        clock.advance(11)  # past the mark's time, at the next refresh
        await until(pilot, lambda: shown(app, "a:30000", "") == "")


async def test_a_source_gone_stale_and_back_marks_nothing_a_restart_does():
    def stale(r: FleetRow) -> FleetRow:
        return replace(r, state="stale", detail=f"last seen {r.state}")

    restarted = replace(A, restarted_at=T0, detail="restarted 12:00:00")
    app, _ = fleet(Script(snap(A, B), snap(stale(A), stale(B), stale=True), snap(restarted, B)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refreshes >= 3)
        assert shown(app, "b:8000", "") == ""  # warming, then unknown, then warming
        assert shown(app, "a:30000", "") == "●"  # restarted, serving all along
        assert shown(app, "a:30000", "state") == "▶ restarted 12:00:00"


async def test_stale_source_says_why_and_keeps_the_rows():
    why = "prom:9090 unreachable: connection refused"
    app, _ = fleet(Script(snap(*ROWS), snap(*ROWS, stale=True, problem=why)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refreshes >= 2)
        problem = app.query_one("#fleet-problem", Static)
        assert problem.display and why in text(problem)
        assert "stale" in text(problem)
        assert len(order(app)) == 3


async def test_warnings_are_shown():
    app, _ = fleet(Script(snap(*ROWS, warnings=("partial result: 1 query timed out",))))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refreshes >= 1)
        assert "partial result: 1 query timed out" in text(app.query_one("#fleet-warnings"))


async def test_refreshes_never_overlap():
    source = Script(snap(*ROWS), delay=0.05)
    app = FleetApp(source, interval_s=0)  # the next asked as soon as the last answered
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: source.calls >= 5)
    assert source.most_at_once == 1


async def test_enter_opens_the_hosts_dashboard_and_escape_comes_back():
    opened, followed = [], asyncio.Event()
    ended = asyncio.Event()

    async def follow() -> None:
        followed.set()
        try:
            await asyncio.Event().wait()  # as a session: until cancelled
        finally:
            ended.set()

    def open_host(row: FleetRow) -> OpenedHost:
        opened.append(row.host)
        return OpenedHost(watch_of(SAMPLE, row.host), follow)

    app, _ = fleet(Script(snap(*ROWS)), open_host=open_host)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await until(pilot, lambda: app.refreshes >= 1)
        await pilot.press("down", "enter")  # the warming row: host gpu-b
        await until(pilot, lambda: isinstance(app.screen, HostScreen))
        assert opened == ["gpu-b"]
        header = app.screen.query_one(HostPane).query_one(HostHeader)
        await until(pilot, lambda: "SERVING" in text(header))
        assert followed.is_set()
        await pilot.press("f")  # the dashboard's keys: a watch without a session has no flags
        await until(pilot, lambda: any("flag panel" in text(t) for t in app.screen.query("Toast")))
        await pilot.press("c")  # and the log pane's: no crash in a serving host's log
        await until(
            pilot, lambda: any("no crash line" in text(t) for t in app.screen.query("Toast"))
        )
        await pilot.press("m")
        log_pane = app.screen.query_one(HostPane).log_pane
        await until(pilot, lambda: app.screen.maximized is log_pane)
        await pilot.press("escape")  # restores the log pane first
        await until(pilot, lambda: app.screen.maximized is None)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen.query_one(FleetView), FleetView))
        await until(pilot, ended.is_set)  # leaving the dashboard stops following the host


async def test_a_row_without_host_says_why_it_cannot_open():
    app, _ = fleet(Script(snap(*ROWS)), open_host=lambda row: None)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await until(pilot, lambda: app.refreshes >= 1)
        await pilot.press("enter")  # the crashed row, first: no SSH host
        await until(pilot, lambda: len(app.screen.query("Toast")) == 1)
        assert "c:8000: no SSH host maps to it" in text(app.screen.query_one("Toast"))
        assert not isinstance(app.screen, HostScreen)
    assert app.view.table.cursor_key == "c:8000"


async def test_overview_is_the_same_table_and_enter_opens_the_hosts_tab():
    loading = SAMPLE.read_bytes().index(b"Load weight end")
    app, _ = dashboard(watch_of(SAMPLE, "ct129"), watch_of(SAMPLE, "ct130", upto=loading))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(Overview).table
        await until(pilot, lambda: table.row_count == 2)
        assert table.text("1", "instance") == "ct130"
        await pilot.press("down", "enter")
        assert app.query_one(TabbedContent).active == "host-1"
