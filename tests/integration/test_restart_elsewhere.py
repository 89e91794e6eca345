"""A dashboard watching a server that another sgwatch (or a person) restarts follows the
new run: the old process being gone is a restart, not a crash."""

from __future__ import annotations

import asyncio

from sgwatch.cli import exitcodes
from sgwatch.core import events as ev
from sgwatch.live.options import Options
from sgwatch.live.session import Session
from sgwatch.live.transition import CRASHED
from sgwatch.live.watch import Watch
from tests.integration.headless import QWEN, cli_env, sgwatch
from tests.integration.helpers import arun, stop, until


def test_a_restart_made_elsewhere_is_followed_not_called_a_crash(host, ssh, sims, tmp_path):
    log = tmp_path / "server.log"
    sims.launch(log, *QWEN)
    (old,) = sims.pids
    env = cli_env(host, tmp_path / "home")

    async def body():
        watch = Watch("gpu129")
        crashes = []
        watch.subscribe(lambda t: crashes.append(t) if t.kind == CRASHED else None)
        # look at the process often: the gap must not fool it
        session = Session(watch, lambda: ssh("gpu129"), pid=old, options=Options(check_every=0.2))
        task = asyncio.create_task(session.run())
        await until(lambda: watch.state.state in (ev.READY, ev.SERVING), timeout=60)
        done = await asyncio.to_thread(
            sgwatch, env, "restart", "gpu129", "--pid", str(old),
            "--enable", "enable-metrics", "--yes", "--grace", "5",
        )  # fmt: skip
        assert done.returncode == exitcodes.OK, done.stderr
        new = int(done.stdout.split("restarted: pid ")[1].split(";")[0].split()[0])
        sims.pids.append(new)
        await until(lambda: session.server is not None and session.server.pid == new, 30)
        await until(lambda: watch.state.state in (ev.READY, ev.SERVING), timeout=60)
        await stop(task, session)
        return watch, crashes

    watch, crashes = arun(body(), timeout=180)
    assert crashes == [] and watch.state.crash is None
    assert watch.state.args.get("enable_metrics") is True
