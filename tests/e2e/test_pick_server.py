"""Two servers on one host: the dashboard asks which to watch, and follows that one."""

import os
import signal
import subprocess
import sys

import pytest

from sgwatch.live.linkstate import LIVE
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.transport.local import LocalTransport
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.picker import ServerPicker
from tests.conftest import until


@pytest.fixture
def two_servers(tmp_path):
    procs, logs = [], []
    for i, model in enumerate(("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct")):
        log = tmp_path / f"server{i}.log"
        with open(log, "wb") as out:
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "sgwatch.sim",
                        "--model-path",
                        model,
                        "--host",
                        "127.0.0.1",
                        "--port",
                        "0",
                        "--sim-speed",
                        "50",
                    ],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    cwd=tmp_path,
                    start_new_session=True,
                )
            )
        logs.append(str(log))
    yield logs
    for p in procs:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


async def test_picker_lists_both_and_the_choice_is_followed(two_servers):
    watch = Watch("localhost")
    session = Session(
        watch, LocalTransport, choose=lambda servers: app.pick_server("localhost", servers)
    )
    app = SgwatchApp([watch], [lambda _w: session.run()], bell=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ServerPicker))
        picker = app.screen
        logs = [s.log for s in picker.servers]
        assert set(two_servers) <= set(logs)
        target = logs.index(two_servers[0])  # the older one: not the default
        for _ in range(target):
            await pilot.press("down")
        await pilot.press("enter")
        await until(pilot, lambda: watch.link == LIVE and watch.state.args)
        assert watch.source.startswith(f"localhost:{two_servers[0]}")
        assert watch.state.args.get("model_path") == "Qwen/Qwen3-8B"
        assert "2 servers on localhost" in watch.note or "servers on localhost" in watch.note
