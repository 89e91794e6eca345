"""`restart` on a pod address restarts the owner: a rollout restart for the same flags, the
exact JSON patch of the container's args for edited ones (shown, applied only when
confirmed), followed to ready; a bare pod is refused; Helm's ownership is warned about."""

from __future__ import annotations

import json

from sgwatch.cli import exitcodes
from tests.k8s.conftest import container, deployment, http_probe, sim, wait_for

HELM = {"app.kubernetes.io/managed-by": "Helm"}


def _spec(cluster, name: str) -> dict:
    return json.loads(cluster.kubectl("get", "deploy", name, "-n", "llm", "-o", "json").stdout)


def test_same_flags_is_a_rollout_restart_followed_to_ready(cluster):
    cluster.apply(deployment("vllm", container(sim(), startupProbe=http_probe(1, 30))))
    (old,) = wait_for(cluster.pods)
    r = cluster.sgwatch("restart", "k8s://llm/vllm", "--yes", timeout=90)
    assert r.returncode == exitcodes.OK, r.stdout + r.stderr
    out = r.stdout.splitlines()
    assert "kubectl: kubectl -n llm rollout restart deployment/vllm" in out
    assert "deployment.apps/vllm restarted" in out
    new = next(x.split("/", 1)[1] for x in out if x.startswith("following pod/"))
    assert new != old["metadata"]["name"]
    assert "READY" in out[-2] and out[-1] == 'deployment "vllm" successfully rolled out'
    assert [p["metadata"]["name"] for p in cluster.pods()] == [new]  # the old pod is gone


def test_edited_flags_are_a_patch_of_the_owners_args_applied_only_when_confirmed(cluster):
    cluster.apply(deployment("vllm", container(sim()), labels=HELM))
    wait_for(cluster.pods)
    before = _spec(cluster, "vllm")
    asked = cluster.sgwatch("restart", "k8s://llm/vllm", "--set", "max-model-len=4096")
    assert asked.returncode == exitcodes.REFUSED  # no terminal to confirm on, no --yes
    assert '"op":"test","path":"/spec/template/spec/containers/0/args"' in asked.stdout
    assert "warning: deployment/vllm is managed by Helm" in asked.stderr
    assert _spec(cluster, "vllm") == before
    r = cluster.sgwatch(
        "restart", "k8s://llm/vllm", "--set", "max-model-len=4096", "--yes", timeout=90
    )
    assert r.returncode == exitcodes.OK, r.stdout + r.stderr
    assert "deployment.apps/vllm patched" in r.stdout
    args = _spec(cluster, "vllm")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[-2:] == ["--max-model-len", "4096"] and "$(POD_IP)" in args
    (pod,) = cluster.pods()
    assert pod["spec"]["containers"][0]["args"] == args


def test_a_bare_pod_is_refused_untouched(cluster):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "solo"},
        "spec": {"containers": [container(sim())]},
    }
    cluster.apply(pod)
    wait_for(cluster.pods)
    r = cluster.sgwatch("restart", "k8s://llm/solo", "--yes")
    assert r.returncode == exitcodes.REFUSED
    assert "pod/solo is a bare pod: nothing would recreate it" in r.stderr
    assert cluster.pods()[0]["status"]["containerStatuses"][0]["restartCount"] == 0


def test_a_leaderworkerset_is_restarted_by_the_annotation_rollout_restart_would_set(cluster):
    template = {"spec": {"terminationGracePeriodSeconds": 1, "containers": [container(sim())]}}
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "dsr1"},
        "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "workerTemplate": template}},
    }
    cluster.apply(lws)
    before = wait_for(lambda: len(cluster.pods()) == 2 and cluster.pods())
    refused = cluster.kubectl("rollout", "restart", "lws/dsr1", "-n", "llm", check=False)
    assert "restarting is not supported" in refused.stderr  # as kubectl says for an LWS
    r = cluster.sgwatch("restart", "k8s://llm/dsr1", "--yes", timeout=90)
    assert r.returncode == exitcodes.OK, r.stdout + r.stderr
    assert "kubectl.kubernetes.io/restartedAt" in r.stdout and "READY" in r.stdout
    uids = {p["metadata"]["uid"] for p in cluster.pods()}
    assert len(uids) == 2 and not uids & {p["metadata"]["uid"] for p in before}  # both new
