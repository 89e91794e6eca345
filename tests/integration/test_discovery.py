"""Discovery finds simulated servers launched detached through SSH, secrets masked on the host."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from sgwatch.core.cmdline import parse
from sgwatch.engines import for_command, process_patterns
from sgwatch.remote.discover import discover, host_python, script, shell
from sgwatch.remote.host import discover as host_discover
from sgwatch.sim.common.nvidia_smi import install
from tests.integration import headless
from tests.integration.detached import detached
from tests.integration.helpers import arun, wait_until

SECRETS = {"HF_TOKEN": "hf_s3cr3t", "OPENAI_API_KEY": "sk-s3cr3t", "DB_PASSWORD": "pw-s3cr3t"}


def sim_argv() -> list[str]:
    return headless.sim_argv("--tp", "2", speed=50)


def test_discovery_finds_detached_simulators_with_argv_cwd_masked_env_and_log(
    host, ssh, tmp_path: Path
):
    state = tmp_path / "gpu-state"
    install(host.gpu_bin, state)
    env = {**SECRETS, "RUN_TAG": "demo", "SGWATCH_SIM_STATE": str(state)}
    runs = [(sim_argv(), tmp_path / f"run{n}", tmp_path / f"run{n}" / "server.log") for n in (1, 2)]

    async def launch() -> list[int]:
        t = ssh("gpu129")
        await t.connect()
        pids = []
        for argv, cwd, log in runs:
            cwd.mkdir()
            r = await t.run(detached(argv, str(cwd), str(log), env), timeout=10)
            pids.append(int(r.stdout))
        await t.close()  # the servers outlive the connection that launched them
        return pids

    async def look():
        t = ssh("gpu129")
        await t.connect()
        try:
            patterns = process_patterns()
            raw = await t.run(shell(patterns), input=script(patterns).encode())
            return raw, await discover(t, process_patterns())
        finally:
            await t.close()

    pids = arun(launch())
    try:
        raw, found = arun(look())
        by_pid = {s.pid: s for s in found.servers}
        for pid, (argv, cwd, log) in zip(pids, runs, strict=True):
            s = by_pid[pid]
            assert (s.engine, s.kind) == ("sim", "sim")
            assert (s.argv, s.cwd, s.log) == (argv, str(cwd), str(log))
            assert (s.stdin, s.stdout, s.stderr) == ("/dev/null", str(log), str(log))
            assert s.pgid == pid  # setsid: its own group, what a stop signals
            assert s.interpreter == sys.executable
            assert s.engine_version is None  # the simulator's release is in its command
            assert {k: s.env[k] for k in SECRETS} == dict.fromkeys(SECRETS, "***")
            assert (s.env["RUN_TAG"], s.env["PYTHONUNBUFFERED"]) == ("demo", "1")
        for secret in SECRETS.values():
            assert secret.encode() not in raw.stdout  # masked before leaving the host
        assert found.gpu_error is None
        assert found.gpus and all(g.name and g.uuid for g in found.gpus)
    finally:
        for pid in pids:
            host.killpg(pid, signal.SIGTERM)
        assert wait_until(lambda: not any(host.alive(p) for p in pids))


def test_a_host_without_nvidia_smi_says_so(host, ssh):
    async def look():
        t = ssh("ct129")
        await t.connect()
        try:
            return await discover(t, process_patterns())
        finally:
            await t.close()

    found = arun(look())
    assert (found.gpus, found.gpu_error) == ([], "no nvidia-smi on this host")
    assert found.python  # the follower will run with it


def test_the_hosts_python_alone_is_the_one_discovery_runs_with(host, ssh):
    async def both():
        t = ssh("ct129")
        await t.connect()
        try:
            return await host_python(t, process_patterns()), await discover(t, process_patterns())
        finally:
            await t.close()

    python, found = arun(both())
    assert python and python == found.python


def test_server_command_lines_are_recognised_on_the_host_as_the_engines_say(monkeypatch):
    monkeypatch.setattr(host_discover, "REQUEST", {"patterns": process_patterns(), "logs": []})

    def on_host(argv):
        found = host_discover.server_pattern(argv)
        return found and (found["engine"], found["kind"])

    servers = {
        ("python3", "-m", "sglang.launch_server", "--model-path", "m"): ("sglang", "launch_server"),
        ("/v/bin/python", "/v/lib/sglang/launch_server.py"): ("sglang", "launch_server"),
        ("/v/bin/python3", "/v/bin/sglang", "serve", "--tp", "2"): ("sglang", "serve"),
        ("python", "-m", "sgwatch.sim", "--tp", "2"): ("sim", "sim"),
        ("/v/bin/python", "/v/bin/sgwatch", "sim"): ("sim", "sim"),
        ("python", "-m", "sgwatch.sim", "vllm", "serve", "m"): ("sim", "sim"),
    }
    for argv, (engine, kind) in servers.items():
        assert on_host(list(argv)) == (engine, kind)
        assert for_command(parse(argv)).name == engine  # the same rule in sgwatch itself
    for other in (["sglang", "--help"], ["vim", "sglang.launch_server"], ["python", "-m", "x"]):
        assert on_host(other) is None
