"""`sgwatch fleet` headless, as a user runs it: a config group of SSH hosts (the test
sshd, simulated servers on it), and a Prometheus URL that nothing answers."""

from __future__ import annotations

import json
import os
import signal
from dataclasses import fields
from pathlib import Path

from sgwatch.cli import exitcodes
from sgwatch.fleet.row import FleetRow
from tests.integration.conftest import host, sims, ssh, sshd  # noqa: F401 (fixtures)
from tests.integration.headless import CRASH_KV, QWEN, Lines, cli_env, sgwatch, start
from tests.integration.sshd import free_port


def group_env(host, tmp_path: Path) -> tuple[dict[str, str], str]:  # noqa: F811
    """The environment and --config of a user whose group `lab` is the sshd's gpu129."""
    env = cli_env(host, tmp_path / "home")
    config = tmp_path / "config.toml"
    config.write_text('[groups]\nlab = ["gpu129"]\n')
    return env, str(config)


def test_json_is_one_snapshot_with_a_servers_list(host, sims, tmp_path):  # noqa: F811
    env, config = group_env(host, tmp_path)
    sims.launch(tmp_path / "server.log", *QWEN, speed="50")
    ready = sgwatch(
        env, "fleet", "@lab", "--wait", "serving", "--config", config, "--timeout", "90"
    )
    assert ready.returncode == exitcodes.OK, ready.stderr

    r = sgwatch(env, "fleet", "@lab", "--json", "--config", config)
    assert r.returncode == exitcodes.OK, r.stderr
    doc = json.loads(r.stdout)
    assert doc["fleet"] == "@lab" and doc["stale"] is False and doc["problem"] is None
    assert doc["warnings"] == []
    [server] = doc["servers"]
    assert set(server) == {f.name for f in fields(FleetRow)}  # every field, null when unknown
    assert server["instance"] == "gpu129" and server["host"] == "gpu129"
    assert server["engine"] == "sglang" and server["model"] == "Qwen/Qwen3-8B"
    assert server["state"] == "idle" and server["detail"].startswith("ready in ")
    assert server["gen_tok_s"] is None  # no request served yet


def test_wait_serving_exits_1_naming_the_crashed_server_and_its_cause(host, sims, tmp_path):  # noqa: F811
    env, config = group_env(host, tmp_path)
    sims.launch(tmp_path / "server.log", *CRASH_KV, speed="4")
    r = sgwatch(env, "fleet", "@lab", "--wait", "serving", "--config", config, "--timeout", "90")
    assert r.returncode == exitcodes.FAILED, (r.stdout, r.stderr)
    assert "gpu129 crashed: KV cache: RuntimeError: Not enough memory." in r.stderr


def test_wait_serving_times_out_with_5_saying_what_is_not_up(host, sims, tmp_path):  # noqa: F811
    env, config = group_env(host, tmp_path)
    sims.launch(tmp_path / "server.log", *QWEN, speed="0.2")  # minutes of warmup
    r = sgwatch(env, "fleet", "@lab", "--wait", "serving", "--config", config, "--timeout", "20")
    assert r.returncode == exitcodes.TIMED_OUT, (r.stdout, r.stderr)
    assert "timed out after 20 s: 1 of 1 not up: gpu129 (warming)" in r.stderr


def test_events_are_json_lines_one_per_state_change(host, sims, tmp_path):  # noqa: F811
    env, config = group_env(host, tmp_path)
    lines = Lines(start(env, "fleet", "@lab", "--events", "--every", "0.5", "--config", config))
    try:
        lines.until(lambda line: '"state": "down"' in line)  # nothing runs there yet
        sims.launch(tmp_path / "server.log", *QWEN, speed="4")
        lines.until(lambda line: '"state": "idle"' in line, timeout=90)
        changes = [json.loads(line) for line in lines.seen]
        assert {c["event"] for c in changes} == {"state"}
        assert all(c["instance"] == "gpu129" and c["fleet"] == "@lab" for c in changes)
        states = [c["state"] for c in changes]
        assert [c["was"] for c in changes] == [None, *states[:-1]]  # one line per change
        assert "warming" in states, states
    finally:
        lines.proc.send_signal(signal.SIGINT)
    status, _, _ = lines.finish(timeout=30)
    assert status == exitcodes.OK


def test_a_prometheus_that_never_answers(tmp_path):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "none")}
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    look = sgwatch(env, "fleet", "--prometheus", url, "--json")
    assert look.returncode == exitcodes.UNREACHABLE
    doc = json.loads(look.stdout)
    assert doc["stale"] is True and doc["servers"] == [] and url in doc["problem"]
    wait = sgwatch(env, "fleet", "--prometheus", url, "--wait", "serving", "--timeout", "2")
    assert wait.returncode == exitcodes.UNREACHABLE
    assert f"--prometheus {url}" not in wait.stderr and "no answer within 2 s" in wait.stderr


def test_an_unknown_fleet_or_group_is_a_usage_error(tmp_path):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "none")}
    for name, says in (("@lab", "no group @lab in the config"), ("prod", "no fleet prod")):
        r = sgwatch(env, "fleet", name, "--json")
        assert r.returncode == exitcodes.USAGE
        assert says in r.stderr and len(r.stderr.strip().splitlines()) == 1
