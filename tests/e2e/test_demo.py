"""The demo path end to end: simulator -> local transport -> session -> Watch -> dashboard."""

import asyncio
import os
import subprocess
from functools import partial

from sgwatch.cli.dashboard import demo_session
from sgwatch.live.linkstate import LIVE
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.sim.demo import start_demo, traffic
from sgwatch.transport.local import LocalTransport
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.widgets.header import HostHeader
from tests.conftest import until


def leftovers(folder) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if str(folder) in line]


async def test_demo_warms_up_serves_and_leaves_nothing_behind(demo):
    watch = Watch("demo")
    session = Session(watch, partial(LocalTransport, env=demo.commands_env), log=str(demo.log))
    app = SgwatchApp([watch], [lambda _w: asyncio.gather(session.run(), traffic(demo))])
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: watch.state.throughput.samples >= 3)
        s = watch.state
        assert s.ready and s.state == "serving", (s.state, watch.note)
        kinds = {c.kind: (c.done, c.total) for c in s.captures}
        assert kinds["piecewise"] == (50, 50) and kinds["decode"][0] == kinds["decode"][1]
        assert sorted(watch.gpu.gpus) == [0, 1]  # the stand-in on PATH, as on a 2-GPU host
        # a frame later the header says what the state says now
        await until(pilot, lambda: "SERVING" in str(app.query_one(HostHeader).render()))
        assert watch.link == LIVE
    demo.stop()
    assert leftovers(demo.folder) == []
    assert not os.path.exists(demo.folder)


async def test_only_the_demos_own_transport_sees_the_stand_in_nvidia_smi():
    """`sgwatch --demo localhost`: the localhost tab lists this machine's GPUs, not the demo's."""
    before = dict(os.environ)
    demo = start_demo(speed=60)
    try:
        session = demo_session(demo)
        assert dict(os.environ) == before  # sgwatch's own environment is left alone
        demos, localhost = await session.link.connect(), LocalTransport()
        where = "command -v nvidia-smi; echo $SGWATCH_SIM_STATE"
        seen = (await demos.run(where)).stdout.decode().split()
        assert seen == [str(demo.folder / "bin" / "nvidia-smi"), demo.env["SGWATCH_SIM_STATE"]]
        listing = (await demos.run("nvidia-smi -L")).stdout.decode()
        assert listing.count("GPU ") == 2  # the demo's two simulated cards
        other = (await localhost.run(where)).stdout.decode()
        assert str(demo.folder) not in other
        await session.link.close()
    finally:
        demo.stop()
