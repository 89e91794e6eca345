"""A two-node server (ct129 rank 0, gpu129 rank 1) restarted as one, through sshd."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from sgwatch.control.controller import Controller
from sgwatch.control.history import History
from sgwatch.control.node_group import group_of, restart_nodes
from sgwatch.core.cmdline import enable
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.sim.common.nvidia_smi import install
from tests.integration.headless import UP
from tests.integration.helpers import arun, until
from tests.integration.test_fleet import launch

NODES = ("--nnodes", "2", "--dist-init-addr", "127.0.0.1:29500")


def test_a_flag_changed_on_rank_0_restarts_both_nodes_in_order(host, ssh, tmp_path):
    state = tmp_path / "gpu-state"
    install(host.gpu_bin, state)
    env = {"SGWATCH_SIM_STATE": str(state)}
    pids: list[int] = []

    async def scenario():
        ctls, tasks = [], []
        for rank, alias in enumerate(("ct129", "gpu129")):
            folder = tmp_path / alias
            extra = (*NODES, "--node-rank", str(rank))
            pids.append(await launch(ssh, alias, folder, "100", env, extra))
            session = Session(Watch(alias), lambda a=alias: ssh(a), pid=pids[-1])
            tasks.append(asyncio.create_task(session.run()))
            await until(lambda s=session: s.watch.state.state in UP)
            ctls.append(Controller(session, History(alias, tmp_path / "history")))
        group = group_of(ctls[1], ctls)
        assert group.complete and "2-node server at 127.0.0.1:29500" in group.describe()
        ref = (await ctls[0].catalog()).catalog.ref
        launched = await restart_nodes(
            group, ctls[0], enable(ctls[0].current, "--enable-metrics", ref)
        )
        pids.extend(x.pid for x in launched)
        for ctl in ctls:
            await until(lambda c=ctl: c.session.watch.state.args.get("enable_metrics") is True)
        for t in tasks:
            t.cancel()
        return launched

    try:
        launched = arun(scenario(), timeout=120)
        assert not host.alive(pids[0]) and not host.alive(pids[1])
        for rank, started in enumerate(launched):
            argv = host.cmdline(started.pid)
            assert argv[argv.index("--node-rank") + 1] == str(rank) and "--enable-metrics" in argv
        kept = {a: next(Path(tmp_path, a).glob("server.log.*")) for a in ("ct129", "gpu129")}
        # rank 1 stopped first (its old log ends first), rank 0 started first
        assert kept["gpu129"].stat().st_mtime <= kept["ct129"].stat().st_mtime
        assert launched[0].start_time <= launched[1].start_time
    finally:
        for pid in pids:
            if host.alive(pid):
                host.killpg(pid, signal.SIGKILL)
