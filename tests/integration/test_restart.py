"""Restart through a real sshd: the server is stopped, its log kept, the new argv launched."""

from __future__ import annotations

import asyncio
import fcntl
import os
import signal
from pathlib import Path

import pytest

from sgwatch.control.controller import Controller
from sgwatch.control.restart import RestartFailed
from sgwatch.core import events as ev
from sgwatch.core.cmdline import enable, set_value
from sgwatch.engines.sglang.effective import differences
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from tests.integration.detached import detached
from tests.integration.headless import SECRET, UP, Rig, sim_argv
from tests.integration.helpers import arun, until, wait_until


def test_toggle_then_restart_runs_the_new_argv_in_the_same_cwd_and_env_keeping_the_old_log(rig):
    async def scenario():
        # the server looked at often: the stop is on purpose, never reported as a crash
        session, ctl, task = await rig.start(check_every=0.1)
        old = session.server
        before = rig.log.read_bytes()
        new = enable(ctl.current, "--enable-metrics", (await ctl.catalog()).catalog.ref)
        check = await ctl.preflight(new)
        assert check.ok, check.problems
        assert check.checked_by == "the simulator's parser"
        launched = await ctl.restart(new, grace_s=10)
        rig.pids.append(launched.pid)
        await until(lambda: session.watch.state.state in UP and session.watch.state.args)
        task.cancel()
        return old, before, launched, session

    old, before, launched, session = arun(scenario(), timeout=90)
    assert not rig.host.alive(old.pid)  # the old process group is gone
    assert rig.host.cmdline(launched.pid) == [*rig.argv, "--enable-metrics"]
    assert rig.host.cwd(launched.pid) == rig.cwd
    env = rig.host.environ(launched.pid)
    assert (env["HF_TOKEN"], env["RUN_TAG"]) == (SECRET, "t1")  # the server's own env, on the host
    kept = Path(launched.kept)
    assert kept.parent == rig.cwd and kept.name.startswith("server.log.")
    assert kept.read_bytes().startswith(before)  # renamed, not copied or cut
    assert session.watch.state.args.get("enable_metrics") is True  # the new run is followed
    assert session.watch.state.crash is None
    runs = rig.history.runs()
    assert [r.outcome for r in runs] == ["ready", "ready"]
    assert runs[-1].argv[-1] == "--enable-metrics" and runs[-1].pid == launched.pid
    assert runs[-1].warmup_seconds is not None
    assert SECRET not in rig.history.path.read_text()


def test_preflight_refuses_invalid_flags_and_the_old_server_keeps_running(rig):
    async def scenario():
        session, ctl, task = await rig.start()
        ref = (await ctl.catalog()).catalog.ref
        language_only = await ctl.preflight(enable(ctl.current, "--language-only", ref))
        unknown = await ctl.preflight(enable(ctl.current, "--enable-warp-drive"))
        ambiguous = await ctl.preflight(set_value(ctl.current, "--cuda-graph", ["8"]))
        task.cancel()
        return session.server.pid, language_only, unknown, ambiguous

    pid, language_only, unknown, ambiguous = arun(scenario(), timeout=90)
    assert [p.message for p in language_only.errors] == [
        "requires at least one encoder urls to be set via --encoder-urls"
    ]
    assert "not a flag of SGLang" in unknown.errors[0].message
    assert "ambiguous abbreviation" in ambiguous.errors[0].message
    assert rig.host.alive(pid) and rig.pids == [pid]


def test_a_hostile_value_reaches_the_server_as_one_literal_argument(rig):
    hostile = 'it\'s a "name"; rm -rf ~ $(touch pwned) `id`'

    async def scenario():
        _, ctl, task = await rig.start()
        ref = (await ctl.catalog()).catalog.ref
        new = set_value(ctl.current, "--served-model-name", [hostile], ref)
        assert (await ctl.preflight(new)).ok
        launched = await ctl.restart(new, grace_s=10)
        rig.pids.append(launched.pid)
        task.cancel()
        return launched

    launched = arun(scenario(), timeout=90)
    argv = rig.host.cmdline(launched.pid)
    assert argv[argv.index("--served-model-name") + 1] == hostile
    assert not (rig.cwd / "pwned").exists() and not Path.home().joinpath("pwned").exists()


def test_a_second_restart_while_one_is_in_flight_is_refused(rig):
    async def scenario():
        _, ctl, task = await rig.start()
        first = asyncio.create_task(ctl.restart(ctl.current, grace_s=10))
        await until(lambda: ctl.busy)
        with pytest.raises(RestartFailed, match="already in progress"):
            await ctl.restart(ctl.current)  # the same dashboard
        launched = await first
        rig.pids.append(launched.pid)
        # another sgwatch restarting on the same host holds the host's lock
        with open(rig.host.dir / f"sgwatch-restart-{os.getuid()}.lock", "a") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            with pytest.raises(RestartFailed, match="another restart is in progress on this host"):
                await ctl.restart(ctl.current)
        task.cancel()
        return launched

    launched = arun(scenario(), timeout=90)
    assert rig.host.alive(launched.pid)  # the refused restart touched nothing
    assert [p for p in rig.pids if rig.host.alive(p)] == [launched.pid]  # never two servers


def test_a_process_sharing_the_servers_group_is_not_touched(host, ssh, tmp_path):
    """A server started by a script without setsid shares the script's process group:
    only the server and its children are stopped, not the group."""
    rig = Rig(host, ssh, tmp_path)  # makes the folder the log goes to
    script = f"{' '.join(sim_argv())} > {rig.log} 2>&1 & exec sleep 120"

    async def start_decoy() -> int:  # the script, in a session and group of its own
        t = ssh("gpu129")
        await t.connect()
        try:
            out = str(tmp_path / "decoy.out")
            return int((await t.run(detached(["sh", "-c", script], str(rig.cwd), out))).stdout)
        finally:
            await t.close()

    decoy = arun(start_decoy())
    rig.pids.append(decoy)
    assert wait_until(lambda: host.children(decoy))
    (server_pid,) = host.children(decoy)

    async def scenario():
        session = Session(Watch("gpu129"), lambda: ssh("gpu129"), pid=server_pid)
        task = asyncio.create_task(session.run())
        await until(lambda: session.watch.state.state in UP)
        ctl = Controller(session, rig.history)
        assert session.server.pgid == decoy != session.server.pid
        launched = await ctl.restart(ctl.current, grace_s=10)
        rig.pids.append(launched.pid)
        task.cancel()
        return launched, session

    try:
        launched, _ = arun(scenario(), timeout=90)
        assert host.alive(decoy)  # the script's sleep, same group, survived
        assert host.alive(launched.pid)
    finally:
        rig.cleanup()


def test_a_launch_that_crashes_rolls_back_to_the_last_command_that_reached_ready(rig):
    async def scenario():
        session, ctl, task = await rig.start()
        good = ctl.current
        ref = (await ctl.catalog()).catalog.ref
        bad = enable(good, "--language-only", ref)  # fails only once launched
        launched = await ctl.restart(bad, grace_s=10)
        rig.pids.append(launched.pid)
        await until(lambda: session.watch.state.state == ev.CRASHED)
        crash = session.watch.state.crash.summary
        target = ctl.rollback_target()
        again = await ctl.restart(target, grace_s=10)
        rig.pids.append(again.pid)
        await until(lambda: session.watch.state.state in UP)
        reference = ctl.reference_warmup_s
        task.cancel()
        return good, target, crash, again, reference

    good, target, crash, again, reference = arun(scenario(), timeout=120)
    assert "encoder urls" in crash
    assert target.argv == good.argv
    assert rig.host.cmdline(again.pid) == rig.argv
    assert rig.host.environ(again.pid)["HF_TOKEN"] == SECRET  # from memory, never written down
    runs = rig.history.runs()
    assert [r.outcome for r in runs] == ["ready", "crashed", "ready"]
    # the warmup panel's "last time": the first run of the same command
    assert reference == runs[0].warmup_seconds is not None
    assert SECRET not in rig.history.path.read_text()


def test_a_server_killed_without_a_word_in_its_log_shows_as_crashed(rig):
    async def scenario():
        session, _, task = await rig.start(check_every=0.2)
        rig.host.kill(rig.pids[0], signal.SIGKILL)  # as the OOM killer does: nothing is logged
        await until(lambda: session.watch.state.state == ev.CRASHED, timeout=10)
        task.cancel()
        return session.watch.state.crash.summary

    summary = arun(scenario(), timeout=60)
    assert f"pid {rig.pids[0]}" in summary and "killed" in summary


def test_the_server_says_what_it_runs_with_when_the_log_does_not(rig):
    """/server_info through the tunnel gives the same overrides as the log's server_args."""

    async def scenario():
        session, ctl, task = await rig.start()
        info = await ctl.server_settings()
        catalog = (await ctl.catalog()).catalog
        task.cancel()
        from_log = differences(ctl.current, session.watch.state.args, catalog)
        return differences(ctl.current, info, catalog), from_log

    from_api, from_log = arun(scenario(), timeout=60)
    assert from_api and from_api == from_log
    assert any(d.setting == "mem_fraction_static" and d.reason == "auto" for d in from_api)
