"""The kubectl stand-in's moving parts, each a process of its own as in a cluster:

    python3 _kubelet.py controller CTX NS KIND NAME   one reconcile of a workload
    python3 _kubelet.py kubelet CTX NS POD            a pod's kubelet, for the pod's life

The controller makes the pods a Deployment (a ReplicaSet's pods, NAME-HASH-XXXXX; the old
ones deleted once the new are ready), a StatefulSet (NAME-0.., one at a time, each old pod
deleted before its successor is made) or a LeaderWorkerSet (per group a leader NAME-G and
workers NAME-G-I, recreated together) asks for. The kubelet runs each container's
command (with `$(VAR)` expanded from its env, `fieldRef: status.podIP` included; each pod
gets its own loopback address as its IP), records its output line by line with the time,
runs the startup, liveness and readiness probes (httpGet, tcpSocket, exec) with their
defaults, kills a container whose probe failed failureThreshold times (TERM, the grace
period, KILL) and restarts exited containers with a doubling back-off
(KUBECTL_STANDIN_BACKOFF seconds first, 10 as in the kubelet), recording the events the
kubelet records (Unhealthy, Killing, BackOff, Started).
"""

import contextlib
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _kube as k
from _standin import append, state


def deleting(ctx, ns, pod):
    return os.path.exists(state(f"k8s-deleting-{ctx}-{ns}-{pod}"))


def delete_pod(ctx, ns, pod):
    open(state(f"k8s-deleting-{ctx}-{ns}-{pod}"), "w").close()


def gone(ctx, ns, pod):
    return k.get(ctx, ns, "Pod", pod) is None


def wait(cond, timeout=3600):
    end = time.time() + timeout
    while not cond():
        if time.time() > end:
            return False
        time.sleep(0.2)
    return True


# -- the controllers ----------------------------------------------------------------------


def new_pod(ctx, ns, name, template, labels, owner):
    meta = template.get("metadata", {})
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": str(uuid.uuid4()),
            "creationTimestamp": k.rfc3339(k.now()),
            "labels": {**meta.get("labels", {}), **labels},
            "annotations": dict(meta.get("annotations", {})),
            "ownerReferences": [owner] if owner else [],
        },
        "spec": {**template["spec"], "nodeName": "kind-worker"},
    }
    k.put(ctx, pod)
    k.start_kubelet(ctx, ns, name)
    return pod


def owner_ref(kind, name, api="apps/v1"):
    uid = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{kind}/{name}"))
    return {
        "apiVersion": api,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def deployment(ctx, ns, doc):
    name, spec = doc["metadata"]["name"], doc["spec"]
    h = k.template_hash(spec["template"])
    mine = [p for p in k.listing(ctx, ns, "Pod") if _owned(p, "ReplicaSet", name)]
    new = [p for p in mine if p["metadata"]["labels"].get("pod-template-hash") == h]
    for _ in range(spec.get("replicas", 1) - len(new)):
        rs = f"{name}-{h}"
        owner = owner_ref("ReplicaSet", rs)
        new.append(
            new_pod(
                ctx, ns, f"{rs}-{k.suffix()}", spec["template"], {"pod-template-hash": h}, owner
            )
        )
    names = [p["metadata"]["name"] for p in new]
    if wait(lambda: all(k.pod_ready(ctx, ns, n) for n in names)):
        for p in mine:
            if p["metadata"]["name"] not in names:
                delete_pod(ctx, ns, p["metadata"]["name"])


def _owned(pod, kind, workload):
    refs = pod["metadata"].get("ownerReferences", [])
    return any(r["kind"] == kind and r["name"].rsplit("-", 1)[0] == workload for r in refs)


def statefulset(ctx, ns, doc):
    name, spec = doc["metadata"]["name"], doc["spec"]
    revision = f"{name}-{k.template_hash(spec['template'])}"
    for i in range(spec.get("replicas", 1)):
        pod = f"{name}-{i}"
        old = k.get(ctx, ns, "Pod", pod)
        if (
            old is not None
            and old["metadata"]["labels"].get("controller-revision-hash") == revision
        ):
            continue
        if old is not None:
            delete_pod(ctx, ns, pod)
            wait(lambda pod=pod: gone(ctx, ns, pod))
        labels = {"controller-revision-hash": revision, "statefulset.kubernetes.io/pod-name": pod}
        new_pod(ctx, ns, pod, spec["template"], labels, owner_ref("StatefulSet", name))
        wait(lambda pod=pod: k.pod_ready(ctx, ns, pod))


def leaderworkerset(ctx, ns, doc):
    name, spec = doc["metadata"]["name"], doc["spec"]
    lwt = spec["leaderWorkerTemplate"]
    worker = lwt["workerTemplate"]
    leader = lwt.get("leaderTemplate", worker)
    h = k.template_hash(lwt)
    for g in range(spec.get("replicas", 1)):
        lead = f"{name}-{g}"
        old = k.get(ctx, ns, "Pod", lead)
        if old is not None and old["metadata"]["labels"].get(k.LWS + "template-revision-hash") == h:
            continue
        group = [lead, *(f"{lead}-{i}" for i in range(1, lwt.get("size", 1)))]
        for pod in group:
            if k.get(ctx, ns, "Pod", pod) is not None:
                delete_pod(ctx, ns, pod)
        for pod in group:
            wait(lambda pod=pod: gone(ctx, ns, pod))
        for i, pod in enumerate(group):
            labels = {
                k.LWS + "name": name,
                k.LWS + "group-index": str(g),
                k.LWS + "worker-index": str(i),
                k.LWS + "template-revision-hash": h,
            }
            owner = owner_ref("StatefulSet", name if i == 0 else lead)
            new_pod(ctx, ns, pod, leader if i == 0 else worker, labels, owner)


# -- the kubelet ---------------------------------------------------------------------------


class Kubelet:
    def __init__(self, ctx, ns, name):
        self.ctx, self.ns, self.name = ctx, ns, name
        self.pod = k.get(ctx, ns, "Pod", name)
        self.ip = f"127.{random.randint(1, 254)}.{random.randint(0, 254)}.{random.randint(2, 254)}"
        self.lock = threading.Lock()
        self.statuses = {
            c["name"]: {
                "name": c["name"],
                "ready": False,
                "started": False,
                "restartCount": 0,
                "image": c.get("image", ""),
                "imageID": "",
                "state": {},
                "lastState": {},
            }
            for c in self.pod["spec"]["containers"]
        }
        self.started_at = k.now()
        self.write()

    def write(self):
        with self.lock:
            running = all("running" in s["state"] for s in self.statuses.values())
            ready = running and all(s["ready"] for s in self.statuses.values())
            t = k.rfc3339(self.started_at)
            status = {
                "phase": "Running"
                if any(s["state"] for s in self.statuses.values())
                else "Pending",
                "hostIP": "172.18.0.2",
                "podIP": self.ip,
                "podIPs": [{"ip": self.ip}],
                "startTime": t,
                "conditions": [
                    {"type": "Initialized", "status": "True", "lastTransitionTime": t},
                    {"type": "Ready", "status": str(ready), "lastTransitionTime": t},
                    {"type": "ContainersReady", "status": str(ready), "lastTransitionTime": t},
                    {"type": "PodScheduled", "status": "True", "lastTransitionTime": t},
                ],
                "containerStatuses": list(self.statuses.values()),
            }
            k.save_status(self.ctx, self.ns, self.name, status)

    def run(self):
        append("k8s-pids", {"pid": os.getpid()})
        threads = [
            threading.Thread(target=self.container, args=(c,), daemon=True)
            for c in self.pod["spec"]["containers"]
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        k.remove(self.ctx, self.ns, "Pod", self.name)
        with contextlib.suppress(OSError):
            os.remove(state(f"k8s-status-{self.ctx}-{self.ns}-{self.name}.json"))
        with contextlib.suppress(OSError):
            os.remove(state(f"k8s-deleting-{self.ctx}-{self.ns}-{self.name}"))

    def env(self, c):
        fields = {
            "status.podIP": self.ip,
            "metadata.name": self.name,
            "metadata.namespace": self.ns,
            "spec.nodeName": "kind-worker",
        }
        out = {}
        for e in c.get("env", []):
            if "value" in e:
                out[e["name"]] = expand(e["value"], out)
            elif "fieldRef" in e.get("valueFrom", {}):
                out[e["name"]] = fields.get(e["valueFrom"]["fieldRef"]["fieldPath"], "")
        return out

    def container(self, c):
        name, status = c["name"], self.statuses[c["name"]]
        backoff = float(os.environ.get("KUBECTL_STANDIN_BACKOFF", "10"))
        grace = self.pod["spec"].get("terminationGracePeriodSeconds", 30)
        while not deleting(self.ctx, self.ns, self.name):
            env = self.env(c)
            argv = [expand(a, env) for a in c.get("command", []) + c.get("args", [])]
            instance = status["restartCount"]
            log = k.log_file(self.ctx, self.ns, self.name, name, instance)
            open(log, "wb").close()
            started = k.now()
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env={**os.environ, **env},
                start_new_session=True,
            )
            append("k8s-pids", {"pid": proc.pid})
            cid = "containerd://" + os.urandom(32).hex()
            with self.lock:
                status.update(
                    containerID=cid,
                    started=False,
                    ready=False,
                    state={"running": {"startedAt": k.rfc3339(started)}},
                )
            self.write()
            k.event(
                self.ctx, self.ns, self.name, "Started", f"Started container {name}", container=name
            )
            killed = threading.Event()
            prober = threading.Thread(
                target=self.probes, args=(c, proc, killed, grace), daemon=True
            )
            prober.start()
            reaper = threading.Thread(target=self.reap, args=(proc, killed, grace), daemon=True)
            reaper.start()
            record(proc.stdout, log)
            code = proc.wait()
            killed.set()
            code = 128 - code if code < 0 else code
            finished = k.now()
            terminated = {
                "exitCode": code,
                "reason": "Completed" if code == 0 else "Error",
                "startedAt": k.rfc3339(started),
                "finishedAt": k.rfc3339(finished),
                "containerID": cid,
            }
            if deleting(self.ctx, self.ns, self.name):
                with self.lock:
                    status.update(state={"terminated": terminated}, ready=False)
                self.write()
                return
            k.event(
                self.ctx,
                self.ns,
                self.name,
                "BackOff",
                f"Back-off restarting failed container {name} in pod "
                f"{self.name}_{self.ns}({self.pod['metadata']['uid']})",
                "Warning",
                name,
            )
            with self.lock:
                status.update(
                    lastState={"terminated": terminated},
                    ready=False,
                    started=False,
                    restartCount=status["restartCount"] + 1,
                    state={
                        "waiting": {
                            "reason": "CrashLoopBackOff",
                            "message": f"back-off {backoff:g}s restarting failed container={name} "
                            f"pod={self.name}_{self.ns}({self.pod['metadata']['uid']})",
                        }
                    },
                )
            self.write()
            end = time.time() + backoff
            while time.time() < end and not deleting(self.ctx, self.ns, self.name):
                time.sleep(0.1)
            backoff = min(backoff * 2, 300)

    def reap(self, proc, killed, grace):
        """Deleting the pod stops its container: TERM, the grace period, KILL."""
        while not killed.is_set():
            if deleting(self.ctx, self.ns, self.name):
                k.event(
                    self.ctx,
                    self.ns,
                    self.name,
                    "Killing",
                    f"Stopping container {self.pod['spec']['containers'][0]['name']}",
                )
                stop(proc, grace)
                return
            time.sleep(0.1)

    def probes(self, c, proc, killed, grace):
        status = self.statuses[c["name"]]
        startup = c.get("startupProbe")
        if startup is not None and not self.probe_until(c, "Startup", startup, proc, killed, grace):
            return
        with self.lock:
            status["started"] = True
            status["ready"] = c.get("readinessProbe") is None
        self.write()
        threads = []
        if (liveness := c.get("livenessProbe")) is not None:
            threads.append(
                threading.Thread(
                    target=self.probe_until,
                    daemon=True,
                    args=(c, "Liveness", liveness, proc, killed, grace, True),
                )
            )
        if (readiness := c.get("readinessProbe")) is not None:
            threads.append(
                threading.Thread(target=self.readiness, args=(c, readiness, killed), daemon=True)
            )
        for t in threads:
            t.start()

    def probe_until(self, c, kind, probe, proc, killed, grace, forever=False):
        """Run `probe` until it succeeds (True) or fails failureThreshold times in a row
        (the container is killed, False); `forever`: a liveness probe, run for good."""
        period, threshold = probe.get("periodSeconds", 10), probe.get("failureThreshold", 3)
        if killed.wait(probe.get("initialDelaySeconds", 0)):
            return False
        failures = 0
        while not killed.is_set():
            ok, why = self.check(c, probe)
            if ok and not forever:
                return True
            failures = 0 if ok else failures + 1
            if not ok:
                k.event(
                    self.ctx,
                    self.ns,
                    self.name,
                    "Unhealthy",
                    f"{kind} probe failed: {why}",
                    "Warning",
                    c["name"],
                )
            if failures >= threshold:
                k.event(
                    self.ctx,
                    self.ns,
                    self.name,
                    "Killing",
                    f"Container {c['name']} failed {kind.lower()} probe, will be restarted",
                    container=c["name"],
                )
                stop(proc, grace)
                return False
            if killed.wait(period):
                return False
        return False

    def readiness(self, c, probe, killed):
        status = self.statuses[c["name"]]
        if killed.wait(probe.get("initialDelaySeconds", 0)):
            return
        while not killed.is_set():
            ok, why = self.check(c, probe)
            if not ok:
                k.event(
                    self.ctx,
                    self.ns,
                    self.name,
                    "Unhealthy",
                    f"Readiness probe failed: {why}",
                    "Warning",
                    c["name"],
                )
            if ok != status["ready"]:
                with self.lock:
                    status["ready"] = ok
                self.write()
            if killed.wait(probe.get("periodSeconds", 10)):
                return

    def check(self, c, probe):
        timeout = probe.get("timeoutSeconds", 1)
        if "exec" in probe:
            r = subprocess.run(probe["exec"]["command"], capture_output=True, timeout=timeout)
            return r.returncode == 0, f"command exited {r.returncode}"
        spec = probe.get("httpGet") or probe.get("tcpSocket")
        port = spec["port"]
        if isinstance(port, str):
            port = next(p["containerPort"] for p in c.get("ports", []) if p.get("name") == port)
        host = spec.get("host") or self.ip
        if "tcpSocket" in probe:
            try:
                socket.create_connection((host, port), timeout).close()
                return True, ""
            except OSError as e:
                return False, f"dial tcp {host}:{port}: connect: {_errtext(e)}"
        url = f"http://{host}:{port}{spec.get('path', '/')}"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as r:
                return 200 <= r.status < 400, f"HTTP probe failed with statuscode: {r.status}"
        except urllib.error.HTTPError as e:
            return False, f"HTTP probe failed with statuscode: {e.code}"
        except OSError as e:
            reason = getattr(e, "reason", e)
            if isinstance(reason, TimeoutError):  # connected; no answer in time
                why = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
                return False, f'Get "{url}": {why}'
            return False, f'Get "{url}": dial tcp {host}:{port}: connect: {_errtext(reason)}'


def _errtext(e):
    if isinstance(e, ConnectionRefusedError):
        return "connection refused"
    if isinstance(e, TimeoutError | socket.timeout):
        return "i/o timeout"
    return str(e)


def stop(proc, grace):
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def record(out, path):
    """The container's output as the runtime logs it: each line with its time."""
    with open(path, "ab", buffering=0) as f:
        for line in out:
            stamp = k.rfc3339(k.now(), nano=True).encode()
            f.write(stamp + b" " + line.rstrip(b"\n") + b"\n")


def expand(text, env):
    """`$(VAR)` from the container's env, as the kubelet expands command and args."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m[1], m[0]), text)


if __name__ == "__main__":
    role, ctx, ns, *rest = sys.argv[1:]
    if role == "kubelet":
        Kubelet(ctx, ns, rest[0]).run()
    else:
        append("k8s-pids", {"pid": os.getpid()})
        kind, name = rest
        doc = k.get(ctx, ns, kind, name)
        {"Deployment": deployment, "StatefulSet": statefulset, "LeaderWorkerSet": leaderworkerset}[
            kind
        ](ctx, ns, doc)
