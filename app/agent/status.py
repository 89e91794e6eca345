"""A server's status in a few hundred bytes: the answer of `status`, and of `wait` when it
ends. What the dashboard's header, warmup and throughput panels show, as fields:
the phase, the capture in progress (N/M) with its ETA, the ETA to ready, ready or the
crash (its cause, its phase and the server's own remedy), what the server turned off
that costs speed and why, and tok/s with the roofline sentence."""

from __future__ import annotations

from typing import Any

from sgwatch.agent.budget import clean
from sgwatch.control.batch1 import Batch1Samples, batch1_roofline
from sgwatch.control.bench_probe import BenchResult
from sgwatch.core import events as ev
from sgwatch.core.eta import ReadyEta
from sgwatch.core.roofline import Roofline
from sgwatch.core.state import ServerState
from sgwatch.core.summary import remedy_out, warmup_seconds
from sgwatch.engines import of_log
from sgwatch.live.linkstate import Link
from sgwatch.live.session import Session

Doc = dict[str, Any]


def status(session: Session, eta: ReadyEta | None, bench: BenchResult | None) -> Doc:
    """The status of the server `session` follows (None fields are left out)."""
    watch, s = session.watch, session.watch.state
    server = session.server
    doc: Doc = {
        "host": watch.label,
        "pid": server.pid if server is not None else None,
        "engine": s.engine or (server.engine if server is not None else None),
        "model": s.identity.model if s.identity is not None else None,
        "state": s.state,
    }
    if watch.link.kind is not Link.LIVE:
        doc["link"] = str(watch.link)
    if watch.note:
        doc["note"] = clean(watch.note, 160)
    doc |= progress(s)
    if eta is not None and s.state in ev.WARMUP_PHASES:
        doc["ready_in_s"] = round(eta.seconds)
        doc["eta_basis"] = eta.basis
    if s.ready:
        doc["warmup_s"] = warmup_seconds(s)
    if s.crash is not None:
        doc["crash"] = crash(s)
    if changes := turned_off(s):
        doc["turned_off"] = changes
    if s.throughput.last is not None:
        doc["tok_s"] = s.throughput.last
    roof, source = roofline(session, bench)
    if roof.ceiling_tok_s is not None:  # else it says only what is missing
        doc["roofline"] = roof.said(source)
    return {k: v for k, v in doc.items() if v is not None}


def progress(s: ServerState) -> Doc:
    """The step in progress: weight shards, or the open graph capture with its ETA."""
    if s.state == ev.LOADING_WEIGHTS and s.weights.total:
        return {"capture": f"weights {s.weights.done or 0}/{s.weights.total}"}
    if s.state in (ev.CAPTURING_GRAPHS, ev.COMPILING):
        cap = next((c for c in reversed(s.captures) if c.open), None)
        if cap is not None:
            done = "?" if cap.done is None else cap.done
            total = "?" if cap.total is None else cap.total
            out: Doc = {"capture": f"{cap.kind} {done}/{total}"}
            if (eta := cap.eta_s) is not None:
                out["capture_eta_s"] = round(eta, 1)
            return out
    return {}


def crash(s: ServerState) -> Doc:
    """Its cause and phase, and the flag change the server itself says avoids it."""
    c = s.crash
    assert c is not None
    doc: Doc = {"phase": c.phase, "cause": clean(c.summary, 200)}
    if c.exception and c.exception not in c.summary:
        doc["exception"] = clean(c.exception, 120)
    if c.exit_code is not None:
        doc["exit_code"] = c.exit_code
    if (r := remedy_out(c.remedy)) is not None:
        doc["remedy"] = clean(r.advice, 160)
        doc["remedy_edits"] = remedy_edits(r.add, r.drop)
    return doc


def remedy_edits(add: list[list[str]], drop: list[str]) -> Doc:
    """The remedy as `restart`'s edits."""
    edits: Doc = {}
    if drop:
        edits["unset"] = [f.lstrip("-") for f in drop]
    for flag, *values in add:
        name = flag.lstrip("-")
        if values:
            edits.setdefault("set", {})[name] = " ".join(values)
        else:
            edits.setdefault("enable", []).append(name)
    return edits


def turned_off(s: ServerState) -> list[Doc]:
    """What the server changed on its own that costs speed, why, and the flag that keeps
    it from doing so."""
    found = of_log(s.engine).speed_changes(s.args, None, s.weights.arch)
    out = []
    for d in found:
        item: Doc = {"what": clean(d.effect, 80)}
        if d.why:
            item["why"] = clean(d.why, 120)
        if d.override_flag:
            item["keep_with"] = d.override_flag
        out.append(item)
    return out


def roofline(session: Session, bench: BenchResult | None) -> tuple[Roofline, str]:
    """The bandwidth roofline: the bench's one-request rate when one ran on this server,
    else the log's decode line at one running request."""
    watch = session.watch
    samples = Batch1Samples()
    samples.observe(watch.state)
    c1 = next((p for p in bench.phases if p.concurrency == 1), None) if bench else None
    return batch1_roofline(
        watch.state,
        watch.gpu,
        samples,
        c1.decode_tok_s if c1 else None,
        bench.accept_length if bench else None,
        session.profile.gpu_bandwidth_gbps,
    )
