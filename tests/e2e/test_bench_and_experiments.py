"""b and e on the demo: a bench completes and shows tok/s, esc cancels one; after a restart
with --enable-metrics the throughput panel reads /metrics and the experiments table has
both runs with the right diff."""

from pathlib import Path

from textual.widgets import DataTable, Static

from sgwatch.cli.dashboard import demo_session
from sgwatch.control.bench_probe import BenchSettings, load_prompts
from sgwatch.control.controller import Controller
from sgwatch.core.cmdline import parse
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.bench_screen import BenchScreen
from sgwatch.ui.experiments_screen import ExperimentsScreen
from sgwatch.ui.widgets.throughput import ThroughputPanel
from tests.conftest import until
from tests.e2e.test_demo import leftovers
from tests.integration import helpers

SERVING = ("ready", "serving")


async def test_bench_cancel_restart_metrics_and_experiments(demo):
    session = demo_session(demo)
    watch = session.watch
    ctl = Controller(session)
    app = SgwatchApp([watch], [lambda _w: session.run()], controllers=[ctl], bell=False)
    try:
        async with app.run_test(size=(140, 45)) as pilot:
            await until(pilot, lambda: session.server is not None and watch.state.state in SERVING)
            await _bench_completes(app, pilot, ctl)
            await _esc_cancels(app, pilot, ctl, demo.port)
            await _restart_with_metrics(app, pilot, ctl, session, watch)
            await _experiments(app, pilot, ctl)
    finally:
        demo.stop(session.server.pid if session.server else None)
    await helpers.until(lambda: leftovers(demo.folder) == [])  # each process gone


async def _bench_completes(app, pilot, ctl) -> None:
    await pilot.press("b")
    await until(pilot, lambda: isinstance(app.screen, BenchScreen))
    screen = app.screen
    await until(pilot, lambda: screen.result is not None, timeout=60)
    result = screen.result
    assert [p.concurrency for p in result.phases] == [1, 4]
    assert all(p.aggregate_tok_s > 0 and p.decode_tok_s > 0 for p in result.phases)
    assert "done" in str(screen.query_one("#bench-status", Static).render())
    await pilot.press("escape")
    await until(pilot, lambda: not isinstance(app.screen, BenchScreen))
    assert ctl.bench is result
    (run,) = [r for r in ctl.history.runs() if "bench" in r.extra]
    assert run.extra["bench"]["phases"][0]["decode_tok_s"] == result.phases[0].decode_tok_s
    roof = app.query_one(ThroughputPanel).query_one("#tput-roof", Static)
    await until(pilot, lambda: "(bench at concurrency 1)" in str(roof.render()))
    assert "measured" in str(roof.render())


async def _esc_cancels(app, pilot, ctl, port: int) -> None:
    first = ctl.bench
    long = BenchSettings(load_prompts(), concurrency=4, max_tokens=4000)
    app.push_screen(BenchScreen(ctl, long))
    await until(pilot, lambda: isinstance(app.screen, BenchScreen))
    screen = app.screen
    await until(pilot, lambda: _client_streams(port) > 0)  # requests in flight
    (worker,) = [w for w in app.workers if w.group == "bench" and not w.is_finished]
    await pilot.press("escape")
    await until(pilot, lambda: not isinstance(app.screen, BenchScreen))
    await until(pilot, lambda: worker.is_cancelled and worker.is_finished)
    await until(pilot, lambda: _client_streams(port) == 0)  # every stream closed
    assert screen.result is None and ctl.bench is first


async def _restart_with_metrics(app, pilot, ctl, session, watch) -> None:
    new = parse([*session.server.argv, "--enable-metrics"])
    await ctl.restart(new, grace_s=5)
    await until(pilot, lambda: watch.state.args.get("enable_metrics") and watch.state.ready)
    panel = app.query_one(ThroughputPanel)
    # the poller needs two scrapes (2 s apart) for a window
    await until(pilot, lambda: panel.border_title == "Throughput (/metrics)", timeout=15)
    assert "TTFT p50" in str(panel.query_one("#tput-now", Static).render())


async def _experiments(app, pilot, ctl) -> None:
    await pilot.press("e")
    await until(pilot, lambda: isinstance(app.screen, ExperimentsScreen) and app.screen.rows)
    screen = app.screen
    rows = sorted(screen.rows, key=lambda r: r.time)
    assert len(rows) == 2
    old, new = rows
    assert old.baseline and old.diff == [] and old.bench_tok_s is not None
    assert new.diff == ["+ --enable-metrics"]
    assert old.best  # the only run with a bench
    assert old.phases and old.kv_tokens and old.graph_mem_gb
    table = screen.query_one(DataTable)
    assert table.row_count == 2
    table.move_cursor(row=table.get_row_index(new.id))
    await pilot.press("space")  # the new run becomes the baseline
    old_row = next(r for r in screen.rows if r.id == old.id)
    assert old_row.diff == ["- --enable-metrics"]
    await pilot.press("x")
    folder = ctl.history.path.parent
    assert (folder / "demo-experiments.csv").is_file()
    assert (folder / "demo-experiments.json").is_file()
    await pilot.press("escape")
    assert not isinstance(app.screen, ExperimentsScreen)


def _client_streams(port: int) -> int:
    """Established TCP connections to the server's port (this test's clients: the demo's
    own traffic does not run here)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "01" and int(fields[2].rsplit(":", 1)[1], 16) == port:
                count += 1
    return count
