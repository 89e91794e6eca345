"""The kubectl stand-in's cluster: objects, pods, events and container logs kept as files
in the stand-in's state folder (_standin.py: beside the executable that ran, so each
test's copy has its own), as the API server, the controllers and the kubelet keep them.

Each context of the kubeconfig ($KUBECONFIG, JSON, which is YAML) is a cluster of its
own. A pod's spec is written once, when its controller makes it; its status only by
its kubelet (_kubelet.py); a container instance's log is `TIMESTAMP LINE` per line, as
the container runtime's log file holds it.
"""

import contextlib
import datetime
import hashlib
import json
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _standin import load, locked, save, state

KINDS = {  # what kubectl accepts for a kind, and what the object's kind is
    "pod": "Pod",
    "pods": "Pod",
    "po": "Pod",
    "deployment": "Deployment",
    "deployments": "Deployment",
    "deploy": "Deployment",
    "statefulset": "StatefulSet",
    "statefulsets": "StatefulSet",
    "sts": "StatefulSet",
    "leaderworkerset": "LeaderWorkerSet",
    "leaderworkersets": "LeaderWorkerSet",
    "lws": "LeaderWorkerSet",
    "event": "Event",
    "events": "Event",
    "ev": "Event",
}
RESOURCE = {  # how kubectl names an object in what it prints: deployment.apps/NAME
    "Pod": "pod",
    "Deployment": "deployment.apps",
    "StatefulSet": "statefulset.apps",
    "LeaderWorkerSet": "leaderworkerset.leaderworkerset.x-k8s.io",
}
LWS = "leaderworkerset.sigs.k8s.io/"


def now():
    return time.time()


def rfc3339(t, nano=False):
    """Kubernetes' time text: whole seconds in objects, RFC3339Nano (trailing zeros
    dropped, as Go writes it) on log lines."""
    d = datetime.datetime.fromtimestamp(t, datetime.UTC)
    if not nano:
        return d.strftime("%Y-%m-%dT%H:%M:%SZ")
    frac = f"{d.microsecond:06d}{random.randint(0, 999):03d}".rstrip("0")
    return d.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "Z"


def parse_time(text):
    """Seconds since the epoch of an RFC 3339 time, to the nanosecond as a pair."""
    text = text.strip()
    base, _, frac = text.rstrip("Z").partition(".")
    d = datetime.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.UTC)
    return int(d.timestamp()), int((frac or "0").ljust(9, "0")[:9])


def key(ctx, ns, kind, name):
    return f"k8s-{ctx}-{ns}-{kind}-{name}.json"


def get(ctx, ns, kind, name):
    return load(key(ctx, ns, kind, name))


def put(ctx, doc):
    m = doc["metadata"]
    save(key(ctx, m["namespace"], doc["kind"], m["name"]), doc)


def remove(ctx, ns, kind, name):
    with contextlib.suppress(OSError):
        os.remove(state(key(ctx, ns, kind, name)))


def listing(ctx, ns, kind):
    prefix = f"k8s-{ctx}-{ns}-{kind}-"
    out = []
    for name in sorted(os.listdir(state(""))):
        if name.startswith(prefix) and name.endswith(".json"):
            doc = load(name)
            if doc:
                out.append(doc)
    return out


def pod_status(ctx, ns, name):
    return load(f"k8s-status-{ctx}-{ns}-{name}.json")


def save_status(ctx, ns, name, status):
    save(f"k8s-status-{ctx}-{ns}-{name}.json", status)


def log_file(ctx, ns, pod, container, instance):
    return state(f"k8s-log-{ctx}-{ns}-{pod}-{container}-{instance}.log")


def event(ctx, ns, pod, reason, message, kind="Normal", container=None):
    """Record an event as the kubelet reports one (repeats are counted, as the API does)."""
    path = f"k8s-events-{ctx}-{ns}.json"
    with locked(path):
        events = load(path) or []
        t = rfc3339(now())
        for e in events:
            same = e["involvedObject"]["name"] == pod and (e["reason"], e["message"]) == (
                reason,
                message,
            )
            if same:
                e["count"] += 1
                e["lastTimestamp"] = t
                break
        else:
            obj = {"kind": "Pod", "namespace": ns, "name": pod, "apiVersion": "v1"}
            if container:
                obj["fieldPath"] = f"spec.containers{{{container}}}"
            events.append(
                {
                    "apiVersion": "v1",
                    "kind": "Event",
                    "type": kind,
                    "reason": reason,
                    "message": message,
                    "involvedObject": obj,
                    "count": 1,
                    "firstTimestamp": t,
                    "lastTimestamp": t,
                    "metadata": {"name": f"{pod}.{os.urandom(8).hex()}", "namespace": ns},
                    "source": {"component": "kubelet", "host": "kind-worker"},
                }
            )
        save(path, events)


def events(ctx, ns):
    return load(f"k8s-events-{ctx}-{ns}.json") or []


def template_hash(template):
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()
    return "".join("bcdfghjklmnpqrstvwxz2456789"[int(c, 16)] for c in digest[:10])


def suffix(n=5):
    return "".join(random.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(n))


def start_kubelet(ctx, ns, pod):
    """The pod's kubelet: a process of its own that runs its containers and probes."""
    kubelet = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kubelet.py")
    subprocess.Popen(
        [sys.executable, kubelet, "kubelet", ctx, ns, pod],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def start_controller(ctx, ns, kind, name):
    """The workload's controller, for one reconcile: make the pods its template says."""
    kubelet = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kubelet.py")
    subprocess.Popen(
        [sys.executable, kubelet, "controller", ctx, ns, kind, name],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def pod_ready(ctx, ns, name):
    st = pod_status(ctx, ns, name) or {}
    return any(c["type"] == "Ready" and c["status"] == "True" for c in st.get("conditions", []))
