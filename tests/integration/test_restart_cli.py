"""`sgwatch restart` as a user types it, over sshd, against a simulated server."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

from sgwatch.cli import exitcodes
from tests.integration.headless import SimHost, cli_env, restarted, sgwatch
from tests.integration.sshd import command

QWEN = ("--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16")


@pytest.fixture
def sims(host, ssh, tmp_path):
    sims = SimHost(host, ssh, tmp_path)
    yield sims
    for pid in _servers_in(host, tmp_path):
        sims.pids.append(pid)  # the restarted ones too
    sims.stop()


def _servers_in(host, folder: Path) -> list[int]:
    """Simulators on the host whose working directory is `folder` (the test's own)."""
    out = []
    for proc in host.processes():
        with contextlib.suppress(OSError):
            cwd = Path(f"/proc/{proc.outside}/cwd").readlink()
            if cwd == folder and "sgwatch.sim" in command(proc.outside):
                out.append(proc.pid)
    return out


def test_restart_with_edits_prints_the_diff_and_follows_the_new_run_to_ready(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    # A warmup of ~5 s (the restart keeps the speed): long enough that the new run is
    # followed while it warms up even on a loaded machine, where connecting takes longer.
    sims.launch(log, *QWEN, speed="20")
    old_pid = sims.pids[0]
    first = sgwatch(env, "wait", "gpu129", "--pid", str(old_pid), "--timeout", "120")
    assert first.returncode == exitcodes.OK, first.stderr

    r = sgwatch(
        env, "restart", "gpu129", "--pid", str(old_pid), "--enable", "enable-metrics",
        "--set", "served-model-name=my model; rm -rf ~", "--unset", "cuda-graph-max-bs",
        "--yes", "--timeout", "120",
    )  # fmt: skip
    assert r.returncode == exitcodes.OK, r.stderr
    out = r.stdout.splitlines()
    assert "+ --enable-metrics" in out
    assert "+ --served-model-name 'my model; rm -rf ~'" in out
    assert "- --cuda-graph-max-bs 16" in out
    assert any(line.startswith("restarted: pid ") for line in out)
    new_pid = restarted(host, env, out, old_pid, tmp_path, b"fired up and ready to roll")
    # The new run followed as `wait` follows one: a progress line at most every 10 s
    # (this warmup takes a few seconds; one line per capture step would be dozens).
    steps = [line for line in out if re.search(r" \d+/\d+", line)]
    assert 1 <= len(steps) <= 2, out
    argv = host.cmdline(new_pid)
    assert argv[argv.index("--served-model-name") + 1] == "my model; rm -rf ~"
    assert "--cuda-graph-max-bs" not in argv and "--enable-metrics" in argv


def test_a_refused_or_unconfirmed_restart_leaves_the_server_alone(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    sims.launch(tmp_path / "server.log", *QWEN)
    pid = sims.pids[0]
    ready = sgwatch(env, "wait", "gpu129", "--pid", str(pid), "--timeout", "120")
    assert ready.returncode == exitcodes.OK, ready.stderr

    wrong = sgwatch(env, "restart", "gpu129", "--pid", str(pid), "--enable", "enable-warp", "--yes")
    assert wrong.returncode == exitcodes.REFUSED
    assert "--enable-warp is not a flag of SGLang" in wrong.stderr

    invalid = sgwatch(env, "restart", "gpu129", "--pid", str(pid), "--enable", "language-only")
    assert invalid.returncode == exitcodes.REFUSED
    assert "encoder urls" in invalid.stderr and "the server was not touched" in invalid.stderr

    unasked = sgwatch(env, "restart", "gpu129", "--pid", str(pid), "--enable", "enable-metrics")
    assert unasked.returncode == exitcodes.REFUSED  # no terminal to ask on, and no --yes
    assert "+ --enable-metrics" in unasked.stdout and "pass --yes" in unasked.stderr

    me = 1  # the host's sshd: a process, but not a server
    gone = sgwatch(env, "restart", "gpu129", "--pid", str(me), "--enable", "enable-metrics")
    assert gone.returncode == exitcodes.NO_SERVER
    assert f"no server with pid {me}; running:" in gone.stderr and f"pid {pid}: " in gone.stderr

    sims.launch(tmp_path / "other.log", *QWEN)  # now two: which one is not guessed
    which = sgwatch(env, "restart", "gpu129", "--enable", "enable-metrics", "--yes")
    assert which.returncode == exitcodes.AMBIGUOUS
    assert all(f"pid {p}: " in which.stderr for p in sims.pids)
    assert all(host.alive(p) and host.cmdline(p)[-1] != "--enable-metrics" for p in sims.pids)
