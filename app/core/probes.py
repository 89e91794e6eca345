"""A container's probes as the kubelet applies them, and what they mean for a warmup.

A probe fails `failureThreshold` times in a row, `periodSeconds` apart, after
`initialDelaySeconds`, before the kubelet kills the container: the warmup's budget is
initialDelaySeconds + failureThreshold x periodSeconds. A startupProbe holds the
liveness probe back until it succeeds, so with one the startup probe's budget is the
warmup's; without one the liveness probe's is (docs/design/kubernetes.md, probes).
Pure: the probes come as the pod spec's JSON, the events as kubectl prints them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

# The kubelet's defaults for a probe's fields
DEFAULTS = {"initialDelaySeconds": 0, "periodSeconds": 10, "failureThreshold": 3}
KINDS = {"startupProbe": "startup", "livenessProbe": "liveness", "readinessProbe": "readiness"}
SIGKILL_EXIT, SIGTERM_EXIT = 137, 143  # 128 + the signal: how a killed container exits
# How vLLM's log ends when SIGTERM reaches it mid-warmup (its handler raises it)
TERMINATED_LINE = "KeyboardInterrupt: terminated"


@dataclass(frozen=True, slots=True)
class Probe:
    kind: str  # startup | liveness | readiness
    initial_delay: float
    period: float
    failure_threshold: int
    action: str  # what it checks, in words: "GET /health on port 8000"

    @property
    def budget_s(self) -> float:
        return self.initial_delay + self.failure_threshold * self.period

    @property
    def arithmetic(self) -> str:
        return (
            f"{self.initial_delay:g} + {self.failure_threshold} × {self.period:g} s"
            if self.initial_delay
            else f"{self.failure_threshold} × {self.period:g} s"
        )

    def describe(self) -> str:
        return f"{self.kind} probe ({self.action}) allows {self.budget_s:g} s ({self.arithmetic})"


def read_probes(spec: dict[str, dict[str, Any]]) -> dict[str, Probe]:
    """The container's probes by kind, from its spec's startupProbe, livenessProbe,
    readinessProbe (the kubelet's defaults where a field is not given)."""
    out = {}
    for key, kind in KINDS.items():
        if (p := spec.get(key)) is None:
            continue
        f = {**DEFAULTS, **p}
        out[kind] = Probe(
            kind,
            float(f["initialDelaySeconds"]),
            float(f["periodSeconds"]),
            int(f["failureThreshold"]),
            _action(p),
        )
    return out


def _action(p: dict[str, Any]) -> str:
    if "httpGet" in p:
        return f"GET {p['httpGet'].get('path', '/')} on port {p['httpGet'].get('port')}"
    if "tcpSocket" in p:
        return f"port {p['tcpSocket'].get('port')} open"
    if "exec" in p:
        return "`" + " ".join(p["exec"].get("command", [])) + "`"
    if "grpc" in p:
        return f"gRPC health on port {p['grpc'].get('port')}"
    return "?"


def warmup_probe(probes: dict[str, Probe]) -> Probe | None:
    """The probe that bounds the warmup: startup, else liveness; None: nothing kills it."""
    return probes.get("startup") or probes.get("liveness")


def overrun(probe: Probe, elapsed_s: float, eta_s: float) -> str | None:
    """A warning while there is still time: ready is expected after the probe kills the
    warmup. None when it is expected in time, or the budget is already spent."""
    if elapsed_s >= probe.budget_s or elapsed_s + eta_s <= probe.budget_s:
        return None
    return (
        f"ready expected at {elapsed_s + eta_s:.0f} s, after the {probe.kind} probe's budget of "
        f"{probe.budget_s:g} s ({probe.arithmetic}): the kubelet will kill this warmup in "
        f"{probe.budget_s - elapsed_s:.0f} s; raise its failureThreshold (sgwatch probe-advice)"
    )


def kill_cause(
    terminated: dict[str, Any] | None, events: list[dict[str, Any]], probe: Probe | None
) -> str | None:
    """Why the kubelet ended the container, in words, from its last state and the pod's
    events; None when they do not say it was killed."""
    code = None if terminated is None else terminated.get("exitCode")
    ran = _ran(terminated)
    after = f" after {ran:.0f} s" if ran is not None else ""
    for kind in ("startup", "liveness"):
        killed = any(
            e.get("reason") == "Killing" and f"failed {kind} probe" in e.get("message", "")
            for e in events
        )
        failed = any(f"{kind.capitalize()} probe failed" in e.get("message", "") for e in events)
        if killed or (failed and code in (SIGKILL_EXIT, SIGTERM_EXIT)):
            budget = f" (budget {probe.budget_s:g} s)" if probe and probe.kind == kind else ""
            return f"killed by the {kind} probe{after}{budget}"
    if terminated is not None and terminated.get("reason") == "OOMKilled":
        return f"killed by the OOM killer{after} (OOMKilled: over the container's memory limit)"
    if code == SIGKILL_EXIT:
        return f"killed (exit 137, SIGKILL){after}"
    if code == SIGTERM_EXIT:
        return f"terminated (exit 143, SIGTERM){after}"
    return None


def _ran(terminated: dict[str, Any] | None) -> float | None:
    """Seconds between the container's start and its end, from their RFC 3339 stamps."""

    if not terminated or not terminated.get("startedAt") or not terminated.get("finishedAt"):
        return None
    start, end = (
        datetime.fromisoformat(terminated[k].replace("Z", "+00:00"))
        for k in ("startedAt", "finishedAt")
    )
    return (end - start).total_seconds()
