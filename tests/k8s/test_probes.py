"""Probes: the warmup's budget beside its ETA to ready, a warning while there is still
time, and a startupProbe sized from the workload's recorded warmups."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from sgwatch.cli import exitcodes
from sgwatch.control.history import History
from sgwatch.core.cmdline import parse
from sgwatch.core.probes import kill_cause, read_probes
from tests.k8s.conftest import container, deployment, http_probe, sim, wait_for


def test_a_budget_is_initial_delay_plus_threshold_times_period_and_a_kill_is_named():
    probes = read_probes(
        {"startupProbe": http_probe(10, 30, 60), "livenessProbe": {"tcpSocket": {"port": 8000}}}
    )
    assert probes["startup"].budget_s == 360 and probes["liveness"].budget_s == 30  # defaults
    killed = {
        "exitCode": 137,
        "reason": "Error",
        "startedAt": "2026-01-01T10:00:00Z",
        "finishedAt": "2026-01-01T10:06:00Z",
    }
    events = [
        {
            "reason": "Unhealthy",
            "message": "Startup probe failed: HTTP probe failed with statuscode: 503",
        }
    ]
    assert kill_cause(killed, events, probes["startup"]) == (
        "killed by the startup probe after 360 s (budget 360 s)"
    )
    assert kill_cause({**killed, "reason": "OOMKilled"}, [], None).startswith(
        "killed by the OOM killer"
    )
    assert kill_cause({"exitCode": 1, "reason": "Error"}, [], None) is None
    # SIGTERM just sent (vLLM logs `KeyboardInterrupt: terminated`): the kubelet's event
    # names the probe before the container's end is in its status
    killing = {
        "reason": "Killing",
        "message": "Container vllm failed liveness probe, will be restarted",
    }
    assert kill_cause(None, [killing], probes["startup"]) == "killed by the liveness probe"


def test_a_warmup_whose_eta_passes_the_startup_probe_is_warned_about_in_time(cluster):
    cmd = sim(speed=0.5)
    five_minutes = http_probe(period=10, threshold=30)
    history = History(
        "k8s://kind-kind/llm/vllm", Path(cluster.env["XDG_STATE_HOME"], "sgwatch", "history")
    )
    for seconds in (410, 420, 430):  # earlier warmups of this command: about 7 minutes
        run = history.launched(parse(cmd), None, None, "pod/vllm-old")
        history.outcome(
            run, "ready", warmup_seconds=seconds, ready_after_s=seconds, model="Qwen/Qwen3-8B"
        )
    cluster.apply(deployment("vllm", container(cmd, startupProbe=five_minutes)))
    wait_for(cluster.pods)
    events = cluster.start("events", "k8s://llm/vllm", "--json")
    try:
        probe = wait_for(lambda: _probe_warning(events), timeout=60)
    finally:
        events.kill()
        events.wait()
    assert probe["probe"] == "startup" and probe["budget_s"] == 300
    assert probe["elapsed_s"] < 300 and probe["elapsed_s"] + probe["eta_s"] > 300
    assert probe["eta_basis"] == "from 3 earlier runs of this command"
    assert re.search(r"the kubelet will kill this warmup in \d+ s", probe["warning"])


def _probe_warning(proc) -> dict | None:
    line = proc.stdout.readline()
    event = json.loads(line) if line else {}
    return event if event.get("event") == "probe" and event.get("warning") else None


def test_probe_advice_sizes_a_startup_probe_from_the_recorded_warmups(cluster):
    cluster.apply(deployment("vllm", container(sim(), startupProbe=http_probe(1, 60))))
    wait_for(cluster.pods)
    none = cluster.sgwatch("probe-advice", "k8s://llm/vllm")
    assert none.returncode == exitcodes.NO_SERVER
    assert "no recorded warmup of Qwen/Qwen3-8B yet" in none.stderr
    assert cluster.sgwatch("wait", "k8s://llm/vllm", "--timeout", "40").returncode == exitcodes.OK
    r = cluster.sgwatch("probe-advice", "k8s://llm/vllm")
    assert r.returncode == exitcodes.OK, r.stderr
    pod = cluster.pods()[0]["metadata"]["name"]
    used = re.search(rf"#   \S+ \S+ {pod}: (\d+) s", r.stdout)
    assert used, r.stdout  # the run it used, named
    threshold = math.ceil(int(used[1]) * 1.5 / 10)
    assert f"  failureThreshold: {threshold} " in r.stdout
    assert "1 recorded warmup" in r.stdout
    assert "readinessProbe:" in r.stdout and "path: /health" in r.stdout
