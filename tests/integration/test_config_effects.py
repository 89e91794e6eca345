"""Each config key does what the README says, seen where a user would notice it.

The dashboard cases run `sgwatch --config FILE ARGS` as the command line does and
drive the dashboard it builds headless (its `run` only hands the app over). Hosts
are `localhost` or, where a server elsewhere on this machine would change the
outcome, the test sshd, following a log file the test writes; `[keys]` and
`hosts.NAME.launch` have their own tests (tests/ui/test_keys.py,
tests/integration/test_launch.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static

from sgwatch.cli import exitcodes, notty
from sgwatch.cli.bench import run as bench_main
from sgwatch.cli.main import main
from sgwatch.live.linkstate import FAILED
from sgwatch.ui.app import SgwatchApp
from tests.conftest import FIXTURES, until
from tests.integration.headless import cli_env
from tests.integration.test_bench import cli_args, launch  # noqa: F401 (a fixture)

SAMPLE = Path(__file__).resolve().parents[2] / "app/samples/qwen27b-tp2-warmup.log"
CRASH = FIXTURES / "sglang/crash_capture_oom.log"
SIZE = (140, 45)


@pytest.fixture
def sgwatch(tmp_path, monkeypatch):
    """`sgwatch --config FILE ARGS...` -> the dashboard it opens, not yet running."""
    opened: list[SgwatchApp] = []
    monkeypatch.setattr(SgwatchApp, "run", lambda app, *a, **kw: opened.append(app))
    monkeypatch.setattr(notty, "terminal", lambda: True)  # pytest holds stdin and stdout

    def open_with(config: str, *args: str) -> SgwatchApp:
        path = tmp_path / "config.toml"
        path.write_text(config)
        assert main(["--config", str(path), *args]) == exitcodes.OK
        return opened[-1]

    return open_with


@pytest.fixture
def heard(monkeypatch) -> dict[str, list[str]]:
    """What the dashboard rang and said: its bell and its toasts."""
    out: dict[str, list[str]] = {"bells": [], "toasts": []}
    notify = SgwatchApp.notify
    monkeypatch.setattr(SgwatchApp, "bell", lambda app: out["bells"].append("ding"))

    def told(app, message, *args, **kwargs):
        out["toasts"].append(message)
        return notify(app, message, *args, **kwargs)

    monkeypatch.setattr(SgwatchApp, "notify", told)
    return out


def test_theme(sgwatch, tmp_path, capsys):
    app = sgwatch('theme = "sgwatch-light"\n', "localhost", "--log", str(tmp_path / "x.log"))
    assert app.theme == "sgwatch-light"
    path = tmp_path / "bad.toml"
    path.write_text('theme = "no-such-theme"\n')
    assert main(["--config", str(path), "localhost"]) == exitcodes.USAGE
    assert "no theme named 'no-such-theme'; choose one of:" in capsys.readouterr().err


@pytest.mark.parametrize(("bell", "toast"), [(False, True), (True, False)])
async def test_notifications_bell_and_toast(sgwatch, heard, tmp_path, bell, toast):
    log = tmp_path / "server.log"
    log.write_bytes(b"")
    config = f"[notifications]\nbell = {str(bell).lower()}\ntoast = {str(toast).lower()}\n"
    app = sgwatch(config, "localhost", "--log", str(log))
    async with app.run_test(size=SIZE) as pilot:
        watch = app.watches[0]
        await until(pilot, lambda: watch.caught_up)
        with log.open("ab") as f:  # the server crashes while sgwatch watches
            f.write(CRASH.read_bytes())
        # The announcement comes a frame after the crash; one call rings and tells, so
        # once the enabled one is heard the other has been decided too.
        await until(pilot, lambda: heard["bells"] or heard["toasts"])
    assert len(heard["bells"]) == (1 if bell else 0)
    assert [t.split(":")[0] for t in heard["toasts"]] == (["localhost"] if toast else [])


def test_groups(sgwatch, tmp_path):
    config = '[groups]\nlab = ["localhost", "127.0.0.1"]\n'
    app = sgwatch(config, "@lab", "--log", str(tmp_path / "x.log"))
    assert [w.label for w in app.watches] == ["localhost", "127.0.0.1"]


async def test_hosts_log(sgwatch, host, tmp_path, monkeypatch):
    # the test sshd, not localhost: there a server running on this machine is followed
    monkeypatch.setenv("HOME", cli_env(host, tmp_path / "home")["HOME"])
    log = tmp_path / "server.log"
    log.write_bytes(SAMPLE.read_bytes())
    app = sgwatch(f'[hosts.ct129]\nlog = "{log}"\n', "ct129")
    async with app.run_test(size=SIZE) as pilot:
        watch = app.watches[0]
        await until(pilot, lambda: watch.source or watch.link == FAILED)
        assert watch.source == f"ct129:{log}", f"not the profile's log: {watch.note}"
        # no server runs there: the run the log holds is over where the log ends
        await until(pilot, lambda: watch.state.state == "stopped")
        assert "its log ends serving" in watch.note


async def test_hosts_gpu_bandwidth_gbps(sgwatch, tmp_path):
    log = tmp_path / "server.log"
    log.write_bytes(SAMPLE.read_bytes())
    config = "[hosts.localhost]\ngpu_bandwidth_gbps = 700\n"
    app = sgwatch(config, "localhost", "--log", str(log))
    async with app.run_test(size=SIZE) as pilot:
        assume = app.query_one("#tput-assume", Static)
        await until(pilot, lambda: assume.display and "GB/s" in str(assume.render()))
        assert "700 GB/s per GPU (config gpu_bandwidth_gbps)" in str(assume.render())


def test_hosts_bench_prompts(launch, ssh, tmp_path, capsys):  # noqa: F811 (the fixture)
    server = launch()
    path = tmp_path / "config.toml"
    path.write_text('[hosts.ct129]\nbench_prompts = ["Say hi in Go.", "Say hi in C."]\n')
    args = cli_args("ct129", server.port, as_json=True)
    args.config = str(path)
    assert bench_main(args, lambda: ssh("ct129")) == exitcodes.OK
    doc = json.loads(capsys.readouterr().out)
    sent = {r["prompt"] for p in doc["phases"] for r in p["requests"]}
    assert sent == {"prompt-1", "prompt-2"}  # the config's two, not the bundled set
