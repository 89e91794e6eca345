"""`sgwatch --demo --engine vllm` end to end: the simulated `vllm serve` -> local transport
-> session -> Watch -> dashboard, to READY and serving with its /metrics, then nothing left."""

import asyncio
import os
import subprocess

from sgwatch.cli.dashboard import demo_session
from sgwatch.control.controller import Controller
from sgwatch.sim.demo import start_demo, traffic
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.widgets.header import HostHeader
from tests.conftest import until


def leftovers(folder) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if str(folder) in line]


async def test_the_vllm_demo_warms_up_to_ready_then_serves_from_metrics():
    demo = start_demo(speed=60, engine="vllm")
    try:
        session = demo_session(demo)
        watch = session.watch
        ctl = Controller(session)

        app = SgwatchApp(  # the dashboard polls /metrics itself, for its controllers
            [watch], [lambda _w: asyncio.gather(session.run(), traffic(demo))], controllers=[ctl]
        )
        async with app.run_test(size=(140, 45)) as pilot:
            await until(pilot, lambda: watch.state.ready, 60)
            s = watch.state
            assert s.engine == "vllm"
            kinds = {c.kind: (c.done, c.total) for c in s.captures}
            assert kinds == {"piecewise": (67, 67), "decode": (67, 67)}, kinds
            # TP-2 on the stand-in's two cards
            await until(pilot, lambda: sorted(watch.gpu.gpus) == [0, 1])
            # traffic: the 10 s throughput lines and the always-on /metrics
            await until(pilot, lambda: watch.state.throughput.samples >= 2)
            await until(pilot, lambda: watch.metrics is not None and watch.metrics.gen_tok_s)
            assert watch.state.state == "serving"
            await until(pilot, lambda: "SERVING" in str(app.query_one(HostHeader).render()))
        await session.link.close()
    finally:
        demo.stop()
    assert leftovers(demo.folder) == []
    assert not os.path.exists(demo.folder)
