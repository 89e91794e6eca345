"""vLLM over sshd, as a user drives it: `sgwatch wait`, `restart` and `bench` against the
simulated `vllm serve` launched detached on the host, judged by exit status and output."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest

from sgwatch.cli import exitcodes
from tests.integration.headless import Lines, SimHost, cli_env, restarted, sgwatch, start

VLLM = ("vllm", "serve", "Qwen/Qwen3-8B", "--max-num-seqs", "16")


@pytest.fixture
def sims(host, ssh, tmp_path):
    sims = SimHost(host, ssh, tmp_path)
    yield sims
    for proc in host.processes():  # a restarted server too: it runs in the test's folder
        with contextlib.suppress(OSError):
            if Path(f"/proc/{proc.outside}/cwd").readlink() == tmp_path:
                sims.pids.append(proc.pid)
    sims.stop()


def test_wait_follows_a_vllm_warmup_to_ready(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    sims.launch(tmp_path / "server.log", *VLLM, speed="4")  # about 15 s: found mid-warmup
    r = sgwatch(env, "wait", "gpu129", "--timeout", "120", "--every", "0")
    assert r.returncode == exitcodes.OK, r.stderr
    assert re.search(r"READY after \d+\.\d s$", r.stdout.splitlines()[-1])
    phases = re.findall(r" phase (\w+)$", r.stdout, re.M)
    assert {"loading_weights", "compiling", "capturing_graphs"} <= set(phases), phases
    assert phases[-1] == "ready"


def test_wait_names_the_cause_of_an_out_of_memory_capture(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    lines = Lines(start(env, "wait", "gpu129", "--log", str(log), "--timeout", "120"))
    lines.until(lambda line: "waiting" in line)
    sims.launch(log, *VLLM, "--gpu-memory-utilization", "0.99")
    status, out, err = lines.finish()
    assert status == exitcodes.FAILED, err
    assert "CRASHED during capturing_graphs: torch.OutOfMemoryError: CUDA out of memory." in err
    assert "READY" not in out


def test_restart_sets_a_flag_and_follows_the_new_run_to_ready(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    sims.launch(tmp_path / "server.log", *VLLM)
    old = sims.pids[0]
    first = sgwatch(env, "wait", "gpu129", "--timeout", "120")
    assert first.returncode == exitcodes.OK, first.stderr

    r = sgwatch(
        env, "restart", "gpu129", "--set", "gpu-memory-utilization=0.85", "--yes",
        "--timeout", "120",
    )  # fmt: skip
    assert r.returncode == exitcodes.OK, r.stderr
    out = r.stdout.splitlines()
    assert "+ --gpu-memory-utilization 0.85" in out
    new = restarted(host, env, out, old, tmp_path, b"Application startup complete.")
    argv = host.cmdline(new)
    assert argv[argv.index("--gpu-memory-utilization") + 1] == "0.85"
    assert argv[argv.index("serve") - 1 : argv.index("serve") + 2] == ["vllm", "serve", VLLM[2]]


def test_a_flag_vllm_does_not_have_is_refused_before_the_server_is_touched(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    sims.launch(tmp_path / "server.log", *VLLM)
    pid = sims.pids[0]
    assert sgwatch(env, "wait", "gpu129", "--timeout", "120").returncode == exitcodes.OK
    r = sgwatch(env, "restart", "gpu129", "--set", "mem-fraction-static=0.8", "--yes")
    assert r.returncode == exitcodes.REFUSED
    assert "--mem-fraction-static is not a flag of vLLM 0.11.0" in r.stderr
    assert host.alive(pid)


def test_bench_measures_the_vllm_server(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    sims.launch(tmp_path / "server.log", *VLLM, "--sim-tok-s", "80")
    assert sgwatch(env, "wait", "gpu129", "--timeout", "120").returncode == exitcodes.OK
    r = sgwatch(env, "bench", "gpu129", "--concurrency", "2", "--max-tokens", "32", "--json")
    assert r.returncode == exitcodes.OK, r.stderr
    doc = json.loads(r.stdout)
    tok_s = [p["aggregate_tok_s"] for p in doc["phases"]]
    assert len(tok_s) == 2 and all(t > 0 for t in tok_s), doc
