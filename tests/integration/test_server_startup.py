"""The server's own start-up time, asked of it over SSH once it is up: the simulated
SGLang 0.5.23 serves it in /server_info and as gauges on /metrics, the same figure its
log's timings line gives; the warmup checklist shows it beside sgwatch's time to ready."""

from __future__ import annotations

import asyncio

import pytest

from sgwatch.control.metrics_poll import poll_metrics
from sgwatch.core.display import duration
from sgwatch.core.summary import warmup_seconds
from sgwatch.engines import by_name
from sgwatch.ui.widgets.warmup import _checklist
from tests.integration.headless import Rig, sim_argv
from tests.integration.helpers import arun, until


@pytest.fixture
def rig_0523(host, ssh, tmp_path):
    made = Rig(host, ssh, tmp_path, sim_argv("--sim-format", "0.5.23", "--enable-metrics"))
    yield made
    made.cleanup()


def test_the_servers_own_start_up_time_is_asked_once_up_and_shown_beside_time_to_ready(
    rig_0523,
):
    async def scenario():
        session, ctl, task = await rig_0523.start()
        watch = session.watch
        tasks = [task]
        try:
            await until(lambda: watch.state.ready)
            assert watch.state.server_startup_from == "log"  # its timings line, until asked
            tasks.append(asyncio.create_task(poll_metrics(ctl, watch, every=0.2)))
            await until(lambda: watch.state.startup_from_api)
            s = watch.state
            assert s.server_startup_from == "/server_info"  # asked first: needs no metrics
            said = s.startup_timings["tokenizer_e2e"]  # the log's line, rounded to 0.01 s
            assert s.server_startup_s == pytest.approx(said, abs=0.006)
            async with ctl.server_api() as api:
                page = by_name("sglang").startup_from_metrics(await api.metrics_text())
            assert page is not None and page.seconds == s.server_startup_s
            lines = _checklist(s, None, None).plain.splitlines()
            ready = next(line for line in lines if "Ready" in line)
            server = next(line for line in lines if "server says" in line)
            assert lines.index(server) == lines.index(ready) + 1
            assert server.endswith(duration(s.server_startup_s))
            assert ready.endswith(duration(warmup_seconds(s)))
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await session.link.close()

    arun(scenario())
