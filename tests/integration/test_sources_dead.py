"""A server that already died is still what `wait` reports: its log (hosts.NAME.log, or
one sgwatch launched, from the history) was written after every running server
started, so the host's last run is that one, crashed, and another server's READY is
reported only when asked for (--pid)."""

from __future__ import annotations

import asyncio
import contextlib
import sys

from sgwatch.cli import exitcodes
from sgwatch.config import HostProfile
from sgwatch.live.linkstate import NO_SERVER
from sgwatch.live.options import Options
from sgwatch.live.session import Session
from sgwatch.live.transition import NEW_RUN
from sgwatch.live.watch import Watch
from tests.integration.headless import CRASH_KV, QWEN, Lines, cli_env, sgwatch, start
from tests.integration.helpers import arun, until, wait_until
from tests.integration.sshd import free_port


def test_wait_reports_the_last_run_crashed_not_another_servers_ready(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    other = tmp_path / "other.log"
    sims.launch(other, *QWEN)
    (other_pid,) = sims.pids
    assert sgwatch(env, "wait", "gpu129", "--timeout", "120").returncode == exitcodes.OK

    mine = tmp_path / "server.log"
    config = tmp_path / "home" / ".config" / "sgwatch" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[hosts.gpu129]\nlog = "{mine}"\n')
    sims.launch(mine, *CRASH_KV)  # out of memory for the KV cache: dies in its warmup
    assert wait_until(lambda: not host.alive(sims.pids[-1]), timeout=60)

    done = sgwatch(env, "wait", "gpu129", "--timeout", "60")
    assert done.returncode == exitcodes.FAILED, done.stdout + done.stderr
    assert f"no server writes {mine} now; its last run, written" in done.stdout
    assert f"also running: pid {other_pid}" in done.stdout
    assert "CRASHED" in done.stderr

    asked = sgwatch(env, "wait", "gpu129", "--pid", str(other_pid), "--timeout", "60")
    assert asked.returncode == exitcodes.OK, asked.stderr


def test_a_run_sgwatch_launched_before_is_found_through_the_history(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    sims.launch(tmp_path / "other.log", *QWEN)
    assert sgwatch(env, "wait", "gpu129", "--timeout", "120").returncode == exitcodes.OK

    mine = tmp_path / "launched.log"
    argv = [sys.executable, "-m", "sgwatch.sim", *CRASH_KV, "--sim-speed", "50"]
    argv += ["--port", str(free_port())]
    launched = sgwatch(
        env,
        "launch",
        "gpu129",
        "--wait",
        "--log",
        str(mine),
        "--",
        f"SGWATCH_SIM_STATE={sims.state}",
        *argv,
    )
    assert launched.returncode == exitcodes.FAILED, launched.stderr

    done = sgwatch(env, "wait", "gpu129", "--timeout", "60")  # no config: the history
    assert done.returncode == exitcodes.FAILED, done.stdout + done.stderr
    assert f"no server writes {mine} now; its last run" in done.stdout


def test_wait_since_leaves_an_earlier_crash_out_and_waits_for_the_next_run(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    mine = tmp_path / "server.log"
    config = tmp_path / "home" / ".config" / "sgwatch" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[hosts.gpu129]\nlog = "{mine}"\n')
    sims.launch(mine, *CRASH_KV)
    assert wait_until(lambda: not host.alive(sims.pids[-1]), timeout=60)
    assert sgwatch(env, "wait", "gpu129", "--timeout", "60").returncode == exitcodes.FAILED

    waiting = Lines(start(env, "wait", "gpu129", "--since", "--timeout", "120"))
    waiting.until(lambda line: "no run on gpu129 since" in line)
    sims.launch(mine, *QWEN)  # the next run, in the same log
    status, out, err = waiting.finish()
    assert status == exitcodes.OK, out + err
    assert "READY" in out.splitlines()[-1]


# As the dashboard's, more often; the logs of gone servers looked for in no place but the
# shells' folders (this machine's home and /tmp may hold the logs of other work).
LOOKING = Options(keep_looking=True, check_every=0.5, log_places=())


def test_the_dashboards_session_looks_again_until_a_server_starts(host, ssh, sims, tmp_path):
    async def body() -> None:
        watch = Watch("gpu129")
        session = Session(watch, lambda: ssh("gpu129"), options=LOOKING)
        task = asyncio.create_task(session.run())
        try:
            await until(lambda: watch.link == NO_SERVER)
            assert watch.note == "no server running on gpu129; looking again every 0.5 s"
            await asyncio.to_thread(sims.launch, tmp_path / "server.log", *QWEN)
            await until(lambda: watch.state.state == "ready", timeout=120)
            assert watch.source.startswith(f"gpu129:{tmp_path / 'server.log'} (pid ")
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    arun(body(), timeout=180)


def test_the_dashboards_session_leaves_a_crashed_run_for_a_new_server(host, ssh, sims, tmp_path):
    # The run shown crashed; the user starts a server again, writing another log: the
    # dashboard picks it up as soon as discovery sees it, from that log's start.
    crashed, fresh = tmp_path / "server.log", tmp_path / "retry.log"
    sims.launch(crashed, *CRASH_KV)
    assert wait_until(lambda: not host.alive(sims.pids[-1]), timeout=60)

    async def body() -> None:
        watch = Watch("gpu129")
        profile = HostProfile(log=str(crashed))
        session = Session(watch, lambda: ssh("gpu129"), profile=profile, options=LOOKING)
        seen: list[str] = []
        watch.subscribe(lambda t: seen.append(t.kind))
        task = asyncio.create_task(session.run())
        try:
            await until(lambda: watch.state.state == "crashed", timeout=60)
            await asyncio.to_thread(sims.launch, fresh, *QWEN)
            await until(lambda: watch.state.state == "ready", timeout=120)
            assert watch.source.startswith(f"gpu129:{fresh} (pid {sims.pids[-1]})")
            assert watch.note.startswith(f"a new server started: pid {sims.pids[-1]}")
            assert NEW_RUN in seen
            assert any(f"a new server (pid {sims.pids[-1]}) writes {fresh}" in line
                       for line in watch.take_lines()[0])  # fmt: skip
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    arun(body(), timeout=240)
