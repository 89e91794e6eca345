"""`sgwatch pods k8s://...`: the pods whose containers run a server, through kubectl with
the kubeconfig's contexts; the address and the config key that name pods."""

from __future__ import annotations

import json

import pytest

from sgwatch.cli import exitcodes
from sgwatch.core.podaddress import PodAddress, parse_address
from tests.k8s.conftest import container, deployment, http_probe, sim, wait_for

LWS = "leaderworkerset.sigs.k8s.io/"


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("k8s://llm", PodAddress("llm")),
        ("k8s://llm/vllm", PodAddress("llm", None, "vllm")),
        ("k8s://kind-kind/llm/vllm", PodAddress("llm", "kind-kind", "vllm")),
        ("k8s://prod/llm/", PodAddress("llm", "prod", None)),
    ],
)
def test_an_address_names_a_context_a_namespace_and_a_workload(text, address):
    assert parse_address(text) == address
    assert str(address) == text


@pytest.mark.parametrize("text", ["k8s://LLM", "k8s://a/b/c/d", "k8s:///llm/x", "llm"])
def test_a_wrong_address_is_refused_in_one_line(text):
    with pytest.raises(ValueError) as e:
        parse_address(text)
    assert "\n" not in str(e.value)


def test_the_servers_of_a_namespace_are_listed_with_node_phase_and_restarts(cluster):
    sidecar = {"name": "proxy", "image": "envoy", "command": ["sleep", "600"]}
    web = deployment("web", {"name": "web", "image": "nginx", "command": ["sleep", "600"]})
    vllm = deployment("vllm", container(sim(), startupProbe=http_probe()))
    vllm["spec"]["template"]["spec"]["containers"].append(sidecar)
    cluster.apply(web, vllm)
    wait_for(lambda: len(cluster.pods()) == 2)
    r = cluster.sgwatch("pods", "k8s://llm", "--json")
    assert r.returncode == exitcodes.OK, r.stderr
    (server,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert server["pod"].startswith("vllm-") and server["container"] == "vllm"
    assert server["owner"] == "deployment/vllm" and server["engine"] == "sim"
    assert server["node"] == "kind-worker" and server["phase"] == "Running"
    assert server["restarts"] == 0
    plain = cluster.sgwatch("pods", "k8s://kind-kind/llm/vllm")
    assert f"pod/{server['pod']} (deployment/vllm) container vllm" in plain.stdout


def test_a_leaderworkerset_group_is_one_server_with_its_workers(cluster):
    template = {"spec": {"terminationGracePeriodSeconds": 1, "containers": [container(sim())]}}
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "dsr1"},
        "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 3, "workerTemplate": template}},
    }
    cluster.apply(lws)
    pods = wait_for(lambda: len(cluster.pods()) == 3 and cluster.pods())
    assert {p["metadata"]["labels"][LWS + "worker-index"] for p in pods} == {"0", "1", "2"}
    r = cluster.sgwatch("pods", "k8s://llm/dsr1", "--json")
    (server,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert server["pod"] == "dsr1-0" and server["owner"] == "leaderworkerset/dsr1"
    assert server["workers"] == ["dsr1-0-1", "dsr1-0-2"]


def test_a_context_kubectl_does_not_know_is_unreachable_and_no_server_is_no_server(cluster):
    r = cluster.sgwatch("pods", "k8s://nowhere/llm/")
    assert r.returncode == exitcodes.UNREACHABLE
    expected = 'k8s://nowhere/llm/: cluster unreachable: error: context "nowhere" does not exist'
    assert r.stderr.strip() == expected
    empty = cluster.sgwatch("pods", "k8s://llm")
    assert empty.returncode == exitcodes.NO_SERVER
    assert "no pod runs an SGLang or vLLM server" in empty.stderr


def test_a_hosts_entry_names_pods_and_config_check_refuses_a_bad_one(cluster):
    config = cluster.folder / "config.toml"
    config.write_text('[hosts.qwen]\nkubernetes = "k8s://kind-kind/llm/vllm"\n')
    cluster.apply(deployment("vllm", container(sim())))
    wait_for(cluster.pods)
    r = cluster.sgwatch("wait", "qwen", "--config", str(config), "--timeout", "30")
    assert r.returncode == exitcodes.OK, r.stderr
    assert "READY" in r.stdout
    config.write_text('[hosts.qwen]\nkubernetes = "k8s://Kind/llm"\n')
    bad = cluster.sgwatch("config", "check", "--config", str(config))
    assert bad.returncode == exitcodes.USAGE
    assert "hosts.qwen.kubernetes" in bad.stderr and "not a namespace name" in bad.stderr
