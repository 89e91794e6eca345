"""A snapshot of every screen besides the main one (test_dashboard), dark and light.

Frozen data only: Watches fed from fixture logs, a server described by hand,
a history file written here, a bench result built here, the clock moved by the
test (tests/conftest.py). Nothing on these screens reads the time of day but the
experiments table's start times, so that test runs in UTC on dates long past.
"""

import calendar
import json
import time
from dataclasses import replace

import pytest

from sgwatch.control.bench_probe import BenchProgress, BenchResult, PhaseResult, RequestResult
from sgwatch.control.controller import Controller
from sgwatch.control.history import History
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.remote.discover import LogSource, ServerProcess
from sgwatch.transport.local import LocalTransport
from sgwatch.ui import bench_screen
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.bench_screen import BenchScreen
from sgwatch.ui.experiments_screen import ExperimentsScreen
from sgwatch.ui.flagpanel import FlagPanel
from sgwatch.ui.help import HelpScreen
from sgwatch.ui.picker import ServerPicker
from tests.conftest import FIXTURES, Clock, settle, until
from tests.ui.test_dashboard import SAMPLE, watch_of

SIZE = (140, 45)
THEMES = ["sgwatch-dark", "sgwatch-light"]
# The command line the sample log's server_args line says the server runs with.
ARGV = [
    "python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B", "--tp", "2",
    "--mem-fraction-static", "0.85", "--cuda-graph-max-bs", "32",
    "--enforce-piecewise-cuda-graph", "--piecewise-cuda-graph-max-tokens", "4096",
    "--host", "127.0.0.1", "--port", "30000",
]  # fmt: skip


def server(pid: int = 48213, argv: list[str] = ARGV, log: str = "/srv/qwen/server.log"):
    return ServerProcess(
        pid=pid,
        pgid=pid,
        start_time=1000,
        engine="sglang",
        kind="launch_server",
        argv=argv,
        user="ml",
        cwd="/srv/qwen",
        env={},
        env_error=None,
        stdin="/dev/null",
        stdout=log,
        stderr=log,
        log=log,
        log_deleted=False,
        interpreter=None,  # nothing is asked of a host: the bundled flag catalog
        engine_version="0.5.10",  # the bundled catalog nearest to the sample log
    )


def dashboard(watch: Watch, theme: str) -> tuple[SgwatchApp, Controller, Clock]:
    """One host with a discovered server, as `sgwatch ct129` shows it; no pumps run."""
    session = Session(watch, LocalTransport)
    session.server = server()
    ctl = Controller(session)
    clock = Clock()
    app = SgwatchApp([watch], theme=theme, bell=False, controllers=[ctl], clock=clock)
    return app, ctl, clock


async def open_screen(app, pilot, clock, key: str, screen: type, ready=lambda s: True) -> None:
    """On the settled dashboard, press `key` and wait until `screen` shows and is `ready`."""
    await settle(app, pilot, clock)
    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, screen) and ready(app.screen))


def warming(label: str = "ct129") -> Watch:
    """Mid-warmup: not ready, so no run of its own goes into the history."""
    data = SAMPLE.read_bytes()
    return watch_of(SAMPLE, label, upto=data.index(b"Compiling num tokens (num_tokens=512)"))


@pytest.mark.parametrize("theme", THEMES)
def test_flag_panel_snapshot(snap_compare, theme):
    app, _, clock = dashboard(watch_of(SAMPLE), theme)

    async def toggle_a_flag(pilot) -> None:
        await open_screen(app, pilot, clock, "f", FlagPanel, lambda panel: panel.catalog)
        table = app.screen.query_one("#flags")
        table.move_cursor(row=table.get_row_index("--enforce-piecewise-cuda-graph"))
        await pilot.press("space")  # switched off: the pending box says so
        pending = app.screen.query_one("#pending")
        await until(pilot, lambda: "- --enforce-piecewise" in str(pending.render()))

    assert snap_compare(app, terminal_size=SIZE, run_before=toggle_a_flag)


DAY = calendar.timegm((2025, 11, 28, 9, 14, 2))


def write_history(host: str) -> None:
    """Four runs of the host: a baseline, a flag added, a crash, the best one."""
    phases = {"starting": 11.0, "loading_weights": 39.0, "allocating_kv_cache": 2.0,
              "capturing_graphs": 39.0, "compiling": 48.0, "warming_up": 5.0}  # fmt: skip

    def bench(c1_tok_s: float, c4_agg: float, ttft: float, sd: float = 0.4) -> dict:
        return {
            "time": 0,
            "model": "Qwen/Qwen3.6-27B",
            "max_tokens": 256,
            "accept_length": None,
            "phases": [
                {"concurrency": 1, "requests": 4, "aggregate_tok_s": c1_tok_s - 0.6,
                 "decode_tok_s": c1_tok_s, "decode_tok_s_sd": sd, "ttft_p50_s": ttft},
                {"concurrency": 4, "requests": 4, "aggregate_tok_s": c4_agg,
                 "decode_tok_s": c4_agg / 4, "ttft_p50_s": ttft * 2},
            ],
        }  # fmt: skip

    def ready(warmup: float, tok_s: float, b: dict, graphs: float = 1.25) -> dict:
        return {"outcome": "ready", "warmup_seconds": warmup, "tok_s": tok_s, "phases": phases,
                "weights_gb": 25.63, "graph_mem_gb": graphs, "kv_tokens": 412368,
                "bench": b}  # fmt: skip

    base = ARGV
    metrics = [*ARGV, "--enable-metrics"]
    greedy = [a if a != "0.85" else "0.95" for a in ARGV]
    wider = [a if a != "32" else "64" for a in ARGV]
    records = [
        ({"argv": base}, ready(144.0, 63.7, bench(64.1, 231.0, 0.085))),
        ({"argv": metrics}, ready(146.5, 63.5, bench(63.9, 228.4, 0.088))),
        ({"argv": greedy}, {"outcome": "crashed", "note": "torch.OutOfMemoryError: CUDA OOM"}),
        ({"argv": wider}, ready(171.2, 63.8, bench(64.6, 247.9, 0.083, 0.8), graphs=2.1)),
    ]  # fmt: skip
    path = History(host).path
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for i, (launch, outcome) in enumerate(records):
            run = f"run{i}"
            t = DAY + i * 3600
            f.write(
                json.dumps({"id": run, "time": t, "cwd": "/srv/qwen", "pid": 100 + i, **launch})
            )
            f.write("\n" + json.dumps({"id": run, **outcome}) + "\n")


@pytest.fixture
def utc(monkeypatch):
    """Start times are shown in local time: this test's is UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("theme", THEMES)
def test_experiments_snapshot(snap_compare, theme, utc):
    write_history("ct129")
    app, _, clock = dashboard(warming(), theme)

    async def open_the_table(pilot) -> None:
        await open_screen(app, pilot, clock, "e", ExperimentsScreen, lambda table: table.rows)

    assert snap_compare(app, terminal_size=SIZE, run_before=open_the_table)


def _requests(n: int, tok_s: float, ttft: float) -> list[RequestResult]:
    return [
        RequestResult(f"p{i}", 180 + i, 256, ttft, tok_s, 0.0156, 0.0171, 4.1) for i in range(n)
    ]


RESULT = BenchResult(
    target="ct129:30000",
    model="Qwen/Qwen3.6-27B",
    max_tokens=256,
    phases=[
        PhaseResult(1, _requests(4, 64.1, 0.085), 16.2, 1024, 63.5, 64.1,
                    0.085, 0.091, 0.0156, 0.0171),
        PhaseResult(4, _requests(4, 58.2, 0.170), 4.4, 1024, 231.0, 58.2,
                    0.170, 0.188, 0.0171, 0.0190),
    ],
    accept_length=None,
)  # fmt: skip


@pytest.mark.parametrize("theme", THEMES)
def test_bench_snapshot(snap_compare, theme, monkeypatch):
    async def finished(_api, settings, progress) -> BenchResult:
        """The probe's requests are tested on the demo (tests/e2e); here, its answer."""
        total = sum(len(settings.requests(c)) for c in settings.phases)
        progress(BenchProgress(total, total, settings.phases[-1]))
        return RESULT

    monkeypatch.setattr(bench_screen, "run_bench", finished)
    app, _, clock = dashboard(watch_of(SAMPLE), theme)

    async def bench(pilot) -> None:
        await open_screen(app, pilot, clock, "b", BenchScreen, lambda bench: bench.result)
        await settle(app, pilot, clock)  # the roofline behind takes the bench's figure

    assert snap_compare(app, terminal_size=SIZE, run_before=bench)


@pytest.mark.parametrize("theme", THEMES)
def test_server_picker_snapshot(snap_compare, theme):
    app = SgwatchApp([Watch("ct129")], theme=theme, bell=False, clock=Clock())
    servers = [
        server(51200, ARGV, "/srv/qwen/server.log"),
        server(40961, [*ARGV[:4], "meta-llama/Llama-3.1-8B-Instruct", "--port", "30001"],
               "/srv/llama/server.log"),
        # typed into a tmux pane: no log file, the pane is where its output goes
        replace(server(38807, [*ARGV[:4], "Qwen/Qwen3-8B", "--port", "30002"]),
                log=None, source=LogSource("tmux", "tmux main:1.0")),
    ]  # fmt: skip

    async def ask(pilot) -> None:
        app.push_screen(ServerPicker("ct129", servers))
        await until(pilot, lambda: isinstance(app.screen, ServerPicker))

    assert snap_compare(app, terminal_size=SIZE, run_before=ask)


@pytest.mark.parametrize("theme", THEMES)
def test_help_snapshot(snap_compare, theme):
    app, _, clock = dashboard(watch_of(SAMPLE), theme)

    async def help(pilot) -> None:
        await open_screen(app, pilot, clock, "question_mark", HelpScreen)

    assert snap_compare(app, terminal_size=SIZE, run_before=help)


@pytest.mark.parametrize("theme", THEMES)
def test_overview_snapshot(snap_compare, theme):
    loading = SAMPLE.read_bytes().index(b"Load weight end")
    serving = watch_of(SAMPLE, "ct129")
    serving.feed_gpu(
        b"0, NVIDIA H100 80GB HBM3, 87, 61234, 81559, 312.50, 64\n"
        b"1, NVIDIA H100 80GB HBM3, 85, 61234, 81559, 305.00, 62\n"
    )
    watches = [
        serving,
        watch_of(SAMPLE, "ct130", upto=loading),
        warming("ct131"),
        watch_of(FIXTURES / "sglang/crash_capture_oom.log", "ct132"),
    ]
    clock = Clock()
    app = SgwatchApp(watches, theme=theme, bell=False, clock=clock)
    assert snap_compare(app, terminal_size=SIZE, run_before=lambda pilot: settle(app, pilot, clock))
