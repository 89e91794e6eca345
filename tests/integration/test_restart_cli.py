"""`sgwatch restart` as a user types it, over sshd, against a simulated server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.headless import SimHost, cli_env, sgwatch
from tests.integration.sshd import alive

QWEN = ("--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16")


@pytest.fixture
def sims(host, ssh, tmp_path):
    sims = SimHost(host, ssh, tmp_path)
    yield sims
    for pid in _servers_in(tmp_path):
        sims.pids.append(pid)  # the restarted ones too
    sims.stop()


def _servers_in(folder: Path) -> list[int]:
    """Simulators whose working directory is `folder` (the test's own)."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            if (
                proc.name.isdigit()
                and Path(proc, "cwd").readlink() == folder
                and b"sgwatch.sim" in Path(proc, "cmdline").read_bytes()
            ):
                out.append(int(proc.name))
        except OSError:
            continue
    return out


def cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


def test_restart_with_edits_prints_the_diff_and_follows_the_new_run_to_ready(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    sims.launch(log, *QWEN)
    first = sgwatch(env, "wait", "gpu129", "--timeout", "120")
    assert first.returncode == 0, first.stderr
    old_pid = sims.pids[0]

    r = sgwatch(
        env, "restart", "gpu129", "--pid", str(old_pid), "--enable", "enable-metrics",
        "--set", "served-model-name=my model; rm -rf ~", "--unset", "cuda-graph-max-bs",
        "--yes", "--timeout", "120",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert "+ --enable-metrics" in out
    assert "+ --served-model-name 'my model; rm -rf ~'" in out
    assert "- --cuda-graph-max-bs 16" in out
    assert any(line.startswith("restarted: pid ") for line in out)
    assert "READY" in out[-1]
    new_pid = int(next(x for x in out if x.startswith("restarted: pid ")).split()[2].rstrip(";"))
    assert not alive(old_pid) and alive(new_pid)
    argv = cmdline(new_pid)
    assert argv[argv.index("--served-model-name") + 1] == "my model; rm -rf ~"
    assert "--cuda-graph-max-bs" not in argv and "--enable-metrics" in argv
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("server.log.")]
    assert len(kept) == 1 and b"fired up and ready to roll" in kept[0].read_bytes()
    history = Path(env["XDG_STATE_HOME"], "sgwatch", "history", "gpu129.jsonl").read_text()
    assert f'"pid":{new_pid}' in history and '"outcome":"ready"' in history


def test_a_refused_or_unconfirmed_restart_leaves_the_server_alone(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    sims.launch(tmp_path / "server.log", *QWEN)
    pid = sims.pids[0]
    assert sgwatch(env, "wait", "gpu129", "--timeout", "120").returncode == 0

    wrong = sgwatch(env, "restart", "gpu129", "--pid", str(pid), "--enable", "enable-warp", "--yes")
    assert wrong.returncode == 5
    assert "--enable-warp is not a flag of SGLang" in wrong.stderr

    invalid = sgwatch(env, "restart", "gpu129", "--pid", str(pid), "--enable", "language-only")
    assert invalid.returncode == 5
    assert "encoder urls" in invalid.stderr and "the server was not touched" in invalid.stderr

    unasked = sgwatch(env, "restart", "gpu129", "--pid", str(pid), "--enable", "enable-metrics")
    assert unasked.returncode == 5  # no terminal to ask on, and no --yes
    assert "+ --enable-metrics" in unasked.stdout and "pass --yes" in unasked.stderr
    assert alive(pid) and cmdline(pid)[-1] != "--enable-metrics"
