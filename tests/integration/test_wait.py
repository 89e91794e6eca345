"""`sgwatch wait` as a script uses it: the real command line over sshd, against
simulated servers launched detached on the host, judged by exit status and output."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from sgwatch.cli import exitcodes
from sgwatch.cli.wait_events import MISSING_LOG_GRACE
from tests.integration.headless import (
    CRASH_KV,
    QWEN,
    Lines,
    cli_env,
    generate,
    sgwatch,
    start,
)
from tests.integration.sshd import free_port


def phases(stdout: str) -> list[str]:
    return re.findall(r" phase (\w+)$", stdout, re.M)


def test_follows_a_warmup_from_before_the_log_exists_to_ready(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    args = ("wait", "gpu129", "--log", str(log), "--timeout", "120", "--every", "0")
    lines = Lines(start(env, *args))
    lines.until(lambda line: "waiting" in line)  # the log is not there yet
    sims.launch(log, *QWEN)
    status, out, err = lines.finish()
    assert status == exitcodes.OK, err
    assert err == ""
    assert re.search(r"READY after \d+\.\d s$", out.splitlines()[-1])
    # Each phase change is a line, in order (the first may be `starting`).
    warmup = ["loading_weights", "allocating_kv_cache", "capturing_graphs", "warming_up"]
    assert [p for p in phases(out) if p != "starting"] == [*warmup, "ready"]
    steps = [(int(a), int(b)) for a, b in re.findall(r" decode (\d+)/(\d+)", out)]
    assert len(steps) > 2 and steps[-1][0] == steps[-1][1]  # capture progress, step by step
    assert steps == sorted(steps)

    # By default a progress line comes at most every 10 s; --quiet says the outcome alone.
    again = sgwatch(env, "wait", "gpu129", "--log", str(log), "--timeout", "60", "--quiet")
    assert again.returncode == exitcodes.OK, again.stderr
    assert len(again.stdout.splitlines()) == 1 and "READY after" in again.stdout


def test_a_server_already_ready_is_reported_at_once_and_serving_needs_traffic(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    port = sims.launch(log, *QWEN)
    first = sgwatch(env, "wait", "gpu129", "--log", str(log), "--timeout", "120")
    assert first.returncode == 0, first.stderr

    again = sgwatch(env, "wait", "gpu129", "--log", str(log), "--timeout", "60")
    assert again.returncode == 0
    # The whole log is read again, but only its current state is printed.
    assert phases(again.stdout) == ["ready"] and "READY" in again.stdout

    # long enough to connect and read the log on a loaded machine; no traffic comes
    idle = sgwatch(env, "wait", "gpu129", "--log", str(log), "--until", "serving", "--timeout", "8")
    assert idle.returncode == exitcodes.TIMED_OUT
    assert "timed out after 8 s waiting for serving (state: ready)" in idle.stderr

    generate(port)
    busy = sgwatch(env, "wait", "gpu129", "--log", str(log), "--until", "serving")
    assert busy.returncode == 0, busy.stderr
    assert phases(busy.stdout) == ["serving"]


def test_a_crash_exits_1_with_the_reason_on_stderr(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    lines = Lines(start(env, "wait", "gpu129", "--log", str(log), "--timeout", "120"))
    lines.until(lambda line: "waiting" in line)
    sims.launch(log, *CRASH_KV)
    status, out, err = lines.finish()
    assert status == exitcodes.FAILED, err
    reason = "CRASHED during allocating_kv_cache: RuntimeError: Not enough memory."
    assert reason in err
    assert "READY" not in out

    # Afterwards the log still says so: a later wait reports the crash at once.
    later = sgwatch(env, "wait", "gpu129", "--log", str(log), "--timeout", "60")
    assert later.returncode == exitcodes.FAILED and reason in later.stderr


@pytest.mark.parametrize(
    ("closed_port", "says"),
    [
        (True, "gone: cannot connect"),  # nothing listens on its port
        (False, "--accept-new-host-key"),  # its host key is not known yet
    ],
)
def test_an_unreachable_host_exits_3(host, tmp_path, closed_port, says):
    port = free_port() if closed_port else host.port
    extra = (
        f"Host gone\n    HostName 127.0.0.1\n    Port {port}\n    User {host.user}\n"
        f"    IdentityFile {host.client_key}\n    IdentitiesOnly yes\n"
    )
    env = cli_env(host, tmp_path / "home", extra, trust=False)
    r = sgwatch(env, "wait", "gone", "--log", "/nowhere/server.log", "--timeout", "60")
    assert r.returncode == exitcodes.UNREACHABLE
    assert says in r.stderr and "Traceback" not in r.stderr
    assert "READY" not in r.stdout


def test_nothing_to_follow_exits_4_at_once_or_after_the_grace_for_a_named_log(host, tmp_path):
    env = cli_env(host, tmp_path / "home")
    me = 1  # the host's sshd: a process, but no server
    gone = sgwatch(env, "wait", "gpu129", "--pid", str(me), "--timeout", "60")
    assert gone.returncode == exitcodes.NO_SERVER
    assert f"gpu129: no server with pid {me}" in gone.stderr and "Traceback" not in gone.stderr

    missing = tmp_path / "typo.log"
    # With --timeout the log is waited for as long as it allows (a server about to start).
    patient = sgwatch(env, "wait", "gpu129", "--log", str(missing), "--timeout", "3")
    assert patient.returncode == exitcodes.TIMED_OUT
    assert "(state: waiting)" in patient.stderr
    # Without one, a log that never comes is said so after the grace, not waited for forever.
    r = sgwatch(env, "wait", "gpu129", "--log", str(missing))
    assert r.returncode == exitcodes.NO_SERVER
    assert f"{missing} still does not exist after {MISSING_LOG_GRACE:g} s" in r.stderr


def test_several_servers_need_a_pid_and_each_is_named_with_its_command(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    sims.launch(tmp_path / "a.log", *QWEN)
    sims.launch(tmp_path / "b.log", *QWEN, "--api-key", "sk-secret")
    r = sgwatch(env, "wait", "gpu129", "--timeout", "60")
    assert r.returncode == exitcodes.AMBIGUOUS, r.stderr
    assert "pick one with --pid" in r.stderr and "pick one" not in r.stdout  # said once
    for pid in sims.pids:  # one line each: the pid and the command that started it
        (line,) = [x for x in r.stderr.splitlines() if f"pid {pid}:" in x]
        assert "sgwatch.sim --model-path Qwen/Qwen3-8B" in line
    assert "sk-secret" not in r.stderr  # secrets stay masked

    picked = sgwatch(env, "wait", "gpu129", "--pid", str(sims.pids[1]), "--timeout", "120")
    assert picked.returncode == exitcodes.OK, picked.stderr
    assert f"b.log (pid {sims.pids[1]})" in picked.stdout


def test_a_bad_config_file_is_bad_input_not_a_wait_outcome(host, tmp_path):
    bad = tmp_path / "config.toml"
    bad.write_text("[hosts.ct129]\nlogg = '/x'\n")
    env = cli_env(host, tmp_path / "home")
    r = sgwatch(env, "wait", "ct129", "--config", str(bad))
    assert r.returncode == exitcodes.USAGE
    assert str(bad) in r.stderr and "logg" in r.stderr


def test_help_ends_with_the_exit_status_table():
    r = subprocess.run(
        [sys.executable, "-m", "sgwatch", "wait", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert all(word in r.stdout for word in ("ready", "crashed", "--timeout", "--until", "--pid"))
    assert r.stdout.rstrip().endswith(exitcodes.epilog())
