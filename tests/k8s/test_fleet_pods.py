"""`sgwatch fleet k8s://...`: a namespace's servers as fleet rows, each state read from its
container's log, against the kubectl stand-in with the simulator as the pods' process."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sgwatch.cli import exitcodes
from sgwatch.control.history import History
from sgwatch.core.cmdline import parse
from tests.k8s.conftest import container, deployment, http_probe, sim, wait_for


def _servers(r) -> dict[str, dict]:
    assert r.returncode == exitcodes.OK, r.stderr
    return {s["instance"]: s for s in json.loads(r.stdout)["servers"]}


def test_a_namespace_of_both_engines_is_a_row_each_warming_then_up(cluster):
    sglang = container(sim(vllm=False, speed=10), name="sglang")
    cluster.apply(deployment("vllm", container(sim(speed=1.5))), deployment("sglang", sglang))
    wait_for(lambda: len(cluster.pods()) == 2)
    rows = _servers(cluster.sgwatch("fleet", "k8s://llm", "--json"))
    assert {(i.split("-")[0], s["engine"]) for i, s in rows.items()} == {
        ("vllm", "vllm"),
        ("sglang", "sglang"),
    }
    vllm = next(s for i, s in rows.items() if i.startswith("vllm-"))
    assert re.fullmatch(r"vllm-\S+/vllm", vllm["instance"]) and vllm["node"] == "kind-worker"
    assert vllm["model"] == "Qwen/Qwen3-8B" and vllm["job"] == "deployment/vllm"
    assert vllm["state"] == "warming" and vllm["gen_tok_s"] is None
    phase = r"Start-up|Weights|weights \d+/\d+|KV cache|graphs \S+|compile \S+|Warm-up"
    assert re.match(phase, vllm["detail"]), vllm  # its phase, from the log
    r = cluster.sgwatch(
        "fleet", "k8s://llm", "--wait", "serving", "--every", "1", "--follow", "1", timeout=120
    )
    assert r.returncode == exitcodes.OK, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "all 2 servers of k8s://llm are up"


def test_a_pod_its_startup_probe_kills_is_crashed_with_that_cause(cluster):
    slow = container(sim(speed=1), startupProbe=http_probe(1, 3))
    cluster.apply(deployment("slow", slow))
    wait_for(cluster.pods)
    r = cluster.sgwatch("fleet", "k8s://llm", "--wait", "serving", "--every", "1", timeout=120)
    assert r.returncode == exitcodes.FAILED, r.stdout + r.stderr
    # "after N s" when the container's start was seen (a loaded machine may miss it)
    killed = r"killed by the startup probe(?: after \d+ s)? \(budget 3 s\)"
    assert re.search(rf"^slow-\S+/vllm crashed: .*{killed}", r.stderr, re.M), r.stderr
    assert "Error" not in r.stderr  # the kubelet's account, not vLLM's KeyboardInterrupt


def test_a_selector_narrows_the_rows_and_a_warmup_its_probe_will_kill_is_flagged(cluster):
    config = cluster.folder / "config.toml"
    config.write_text('[fleets.v]\nkubernetes = "k8s://llm"\nselector = "app in (x"\n')
    bad = cluster.sgwatch("config", "check", "--config", str(config))
    assert bad.returncode == exitcodes.USAGE and "fleets.v.selector" in bad.stderr
    config.write_text('[fleets.v]\nkubernetes = "k8s://llm"\nselector = "app=vllm"\n')
    cmd = sim(speed=0.5)
    history = History(
        "k8s://kind-kind/llm/vllm", Path(cluster.env["XDG_STATE_HOME"], "sgwatch", "history")
    )
    for seconds in (410, 420, 430):  # earlier warmups of this command: about 7 minutes
        run = history.launched(parse(cmd), None, None, "pod/vllm-old")
        history.outcome(
            run, "ready", warmup_seconds=seconds, ready_after_s=seconds, model="Qwen/Qwen3-8B"
        )
    five_minutes = container(cmd, startupProbe=http_probe(period=10, threshold=30))
    other = container(sim(vllm=False), name="sglang")
    cluster.apply(deployment("vllm", five_minutes), deployment("other", other))
    wait_for(lambda: len(cluster.pods()) == 2)
    cfg = ("--config", str(config))
    rows = _servers(cluster.sgwatch("fleet", "v", *cfg, "--json"))
    assert [i.split("-")[0] for i in rows] == ["vllm"]
    (vllm,) = rows.values()
    assert vllm["state"] == "warming"
    assert re.search(r"⚠ ready at ~4\d\d s, startup probe allows 300 s", vllm["detail"]), vllm
    r = cluster.sgwatch("fleet", "v", *cfg, "--wait", "serving", "--timeout", "2")
    assert r.returncode == exitcodes.TIMED_OUT, r.stdout + r.stderr
    assert re.search(r"1 of 1 not up: vllm-\S+/vllm \(warming\)", r.stderr), r.stderr


def test_a_cluster_kubectl_cannot_reach_is_a_stale_fleet_with_exit_3(cluster):
    r = cluster.sgwatch("fleet", "k8s://nowhere/llm/", "--json")
    assert r.returncode == exitcodes.UNREACHABLE
    snap = json.loads(r.stdout)
    assert snap["stale"] and snap["servers"] == []
    assert snap["problem"] == (
        'k8s://nowhere/llm/: cluster unreachable: error: context "nowhere" does not exist'
    )
    wait = cluster.sgwatch("fleet", "k8s://nowhere/llm/", "--wait", "serving", "--timeout", "1")
    assert wait.returncode == exitcodes.UNREACHABLE, wait.stderr
    events = cluster.start("fleet", "k8s://nowhere/llm/", "--events")
    try:
        first = json.loads(events.stdout.readline())
    finally:
        events.kill()
        events.wait()
    assert first["event"] == "source" and first["stale"] is True
    assert "cluster unreachable" in first["problem"]


def test_a_leaderworkerset_group_is_one_row_named_by_its_workload(cluster):
    template = {"spec": {"terminationGracePeriodSeconds": 1, "containers": [container(sim())]}}
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "dsr1"},
        "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 3, "workerTemplate": template}},
    }
    cluster.apply(lws, deployment("other", container(sim())))
    wait_for(lambda: len(cluster.pods()) == 4)
    rows = _servers(cluster.sgwatch("fleet", "k8s://llm/dsr1", "--json"))
    assert list(rows) == ["dsr1-0/vllm"], rows
    assert rows["dsr1-0/vllm"]["job"] == "leaderworkerset/dsr1"
    assert "group of 3 pods" in rows["dsr1-0/vllm"]["detail"]
