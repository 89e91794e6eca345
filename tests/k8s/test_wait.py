"""`wait` and `events` on a pod address, with the exit statuses they have for an SSH
host; a container killed by its startup probe is said to be, and the previous
container's end stays in the note after the kubelet restarts it."""

from __future__ import annotations

import json
import re

from sgwatch.cli import exitcodes
from tests.k8s.conftest import container, deployment, http_probe, sim, wait_for

# "after N s" when the container's start was seen (a loaded machine may miss it)
KILLED = r"killed by the startup probe(?: after \d+ s)? \(budget 3 s\)"


def test_wait_follows_a_pod_to_ready_and_names_its_probe_budget(cluster):
    cluster.apply(deployment("vllm", container(sim(), startupProbe=http_probe(1, 30))))
    wait_for(cluster.pods)
    r = cluster.sgwatch("wait", "k8s://llm/vllm", "--timeout", "40")
    assert r.returncode == exitcodes.OK, r.stderr
    lines = r.stdout.splitlines()
    assert "startup probe (GET /health on port http) allows 30 s (30 × 1 s)" in r.stdout
    assert "READY" in lines[-1]


def test_a_warmup_the_startup_probe_kills_is_said_to_be_and_stays_said_after_restart(cluster):
    slow = container(sim(speed=1), startupProbe=http_probe(1, 3))
    cluster.apply(deployment("slow", slow))
    wait_for(cluster.pods)
    r = cluster.sgwatch("wait", "k8s://llm/slow", "--timeout", "40")
    assert r.returncode == exitcodes.FAILED, r.stdout + r.stderr
    assert re.search(f"CRASHED during [a-z_]+: {KILLED}", r.stderr), r.stderr
    assert "Error" not in r.stderr.split("CRASHED", 1)[1]  # not a Python error

    def restarted_and_running():
        st = cluster.pods()[0]["status"]["containerStatuses"][0]
        return st["restartCount"] >= 1 and "running" in st["state"]

    wait_for(restarted_and_running)
    events = cluster.start("events", "k8s://llm/slow", "--json", "--only", "note")
    try:
        previous = wait_for(lambda: _note(events, "the previous container (restart"))
    finally:
        events.kill()
        events.wait()
    assert re.search(f"was {KILLED}", previous), previous


def _note(proc, text: str) -> str | None:
    """The next note of `events --json` that holds `text` (None: this one does not)."""
    line = proc.stdout.readline()
    note = json.loads(line)["text"] if line else ""
    return note if text in note else None


def test_wait_exits_as_for_an_ssh_host_with_no_server_or_several(cluster):
    none = cluster.sgwatch("wait", "k8s://llm", "--timeout", "10")
    assert none.returncode == exitcodes.NO_SERVER
    assert "k8s://llm: no pod runs an SGLang or vLLM server" in none.stderr
    cluster.apply(deployment("a", container(sim())), deployment("b", container(sim())))
    wait_for(lambda: len(cluster.pods()) == 2)
    several = cluster.sgwatch("wait", "k8s://llm", "--timeout", "10")
    assert several.returncode == exitcodes.AMBIGUOUS
    assert "several servers" in several.stderr
    unknown = cluster.sgwatch("wait", "k8s://nowhere/llm/", "--timeout", "10")
    assert unknown.returncode == exitcodes.UNREACHABLE
