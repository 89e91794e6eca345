"""A Kubernetes address as the user types it: `k8s://[CONTEXT/]NAMESPACE[/WORKLOAD]`.

Two parts read as NAMESPACE/WORKLOAD (the kubeconfig's current context); a context with a
whole namespace is `k8s://CONTEXT/NAMESPACE/` (the slash ends the namespace). WORKLOAD is
the name of a Deployment, StatefulSet or LeaderWorkerSet, or of one pod.
Pure: kubectl itself resolves the context and its credentials (transport/kube.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SCHEME = "k8s://"
FORM = f"{SCHEME}[CONTEXT/]NAMESPACE[/WORKLOAD]"
# DNS-1123 labels and subdomains: what a namespace and an object name may be
_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")


@dataclass(frozen=True, slots=True)
class PodAddress:
    namespace: str
    context: str | None = None  # None: the kubeconfig's current context
    workload: str | None = None  # None: every server in the namespace

    def __str__(self) -> str:
        ctx = f"{self.context}/" if self.context else ""
        if self.workload:
            return f"{SCHEME}{ctx}{self.namespace}/{self.workload}"
        return f"{SCHEME}{ctx}{self.namespace}" + ("/" if self.context else "")

    def kubectl_flags(self) -> list[str]:
        """The flags that aim a kubectl command at this address's context and namespace."""
        ctx = ["--context", self.context] if self.context else []
        return [*ctx, "-n", self.namespace]


def is_pod_address(text: str) -> bool:
    return text.startswith(SCHEME)


def parse_address(text: str) -> PodAddress:
    """The address in `text`; ValueError with a one-line reason when it is not one."""
    if not is_pod_address(text):
        raise ValueError(f"{text!r} is not a Kubernetes address ({FORM})")
    parts = text[len(SCHEME) :].split("/")
    if len(parts) == 1:
        context, namespace, workload = None, parts[0], None
    elif len(parts) == 2:
        context, namespace, workload = None, parts[0], parts[1]
    elif len(parts) == 3:
        context, namespace, workload = parts[0] or None, parts[1], parts[2] or None
    else:
        raise ValueError(f"{text}: too many parts ({FORM})")
    if len(parts) == 3 and context is None:
        raise ValueError(f"{text}: an empty context ({SCHEME}NAMESPACE/WORKLOAD has none)")
    if not _NAME.fullmatch(namespace or ""):
        raise ValueError(f"{text}: {namespace!r} is not a namespace name (lowercase, digits, '-')")
    if workload is not None and not _NAME.fullmatch(workload):
        raise ValueError(f"{text}: {workload!r} is not a workload or pod name")
    return PodAddress(namespace, context, workload)


# A label selector as kubectl's -l takes it: terms joined by commas, each `key`, `!key`,
# `key=value` (`==`), `key!=value`, `key in (a,b)` or `key notin (a,b)`; a key is an
# optional DNS-subdomain prefix and `/`, then a name; a value is a name or empty.
_LABEL = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_KEY = rf"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?{_LABEL}"
_VALUE = rf"({_LABEL})?"
_TERM = re.compile(
    rf"\s*(!?{_KEY}|{_KEY}\s*(==?|!=)\s*{_VALUE}"
    rf"|{_KEY}\s+(in|notin)\s*\(\s*{_VALUE}(\s*,\s*{_VALUE})*\s*\))\s*"
)
_TERMS = re.compile(r"(?:[^,(]|\([^)]*\))+")


def check_selector(text: str) -> str:
    """`text` when it is a label selector kubectl takes; ValueError naming the term that
    is not one."""
    terms = _TERMS.findall(text)
    if not text.strip() or ",".join(terms) != text:
        raise ValueError(f"{text!r} is not a label selector like app=vllm,tier!=canary")
    for term in terms:
        if not _TERM.fullmatch(term):
            raise ValueError(f"{term.strip()!r} is not a label selector term (app=vllm, ...)")
    return text
