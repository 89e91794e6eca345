"""Several hosts at once: the overview tab over two hosts reached through sshd, one of
whose servers is killed mid-warmup while the other warms up to ready."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from sgwatch.live.options import Options
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.sim.common.nvidia_smi import install
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.overview import Overview
from tests.conftest import until
from tests.integration.detached import detached
from tests.integration.sshd import free_port

ALIASES = ("ct129", "gpu129")


async def launch(
    ssh, alias: str, folder: Path, speed: str, env: dict[str, str], extra: tuple[str, ...] = ()
) -> int:
    folder.mkdir()
    argv = [sys.executable, "-m", "sgwatch.sim", "--model-path", "Qwen/Qwen3-8B"]
    argv += ["--port", str(free_port()), "--sim-speed", speed, *extra]
    t = ssh(alias)
    await t.connect()
    try:
        r = await t.run(detached(argv, str(folder), str(folder / "server.log"), env), timeout=10)
    finally:
        await t.close()
    return int(r.stdout)


async def test_one_host_dying_mid_warmup_never_stalls_the_other(host, ssh, tmp_path):
    state = tmp_path / "gpu-state"
    install(host.gpu_bin, state)
    env = {"SGWATCH_SIM_STATE": str(state)}
    slow = await launch(ssh, "ct129", tmp_path / "a", "4", env)  # still warming up when killed
    fast = await launch(ssh, "gpu129", tmp_path / "b", "60", env)
    watches = [Watch(a) for a in ALIASES]
    sessions = [
        Session(w, lambda a=a: ssh(a), pid=pid, options=Options(check_every=0.2))
        for w, a, pid in zip(watches, ALIASES, (slow, fast), strict=True)
    ]
    app = SgwatchApp(watches, [lambda _w, s=s: s.run() for s in sessions], bell=False)
    try:
        async with app.run_test(size=(140, 45)) as pilot:
            table = app.query_one(Overview).table

            def cell(row: int, column: str) -> str:
                return table.text(str(row), column)

            await until(pilot, lambda: watches[0].state.state != "starting")
            host.kill(slow, signal.SIGKILL)
            # The rows as drawn, once ct129's GPU poller has found no nvidia-smi there:
            # its blank can no longer turn into figures.
            await until(
                pilot,
                lambda: (
                    cell(0, "state").startswith("✗ crashed")
                    and cell(1, "state").startswith(("✓ idle", "▶ serving"))
                    and cell(1, "GPU").endswith("%")
                    and watches[0].gpu_note
                ),
                timeout=60,
            )
            assert cell(0, "instance") == "ct129"
            assert f"pid {slow}" in cell(0, "state")  # the crash's cause
            assert cell(1, "instance") == "gpu129" and "ready in " in cell(1, "state")
            assert cell(0, "GPU") == ""  # gpu129 has the nvidia-smi stand-in, ct129 none
            await pilot.press("2")
            assert app.query_one("TabbedContent").active == "host-1"
    finally:
        for pid in (slow, fast):
            if host.alive(pid):
                host.killpg(pid, signal.SIGKILL)
