"""The run summary: the JSON contract of `sgwatch replay --json`
(docs/design/architecture.md, the run summary).

Field names are stable: add fields freely, never rename. `events --json` and
the UI build on the same contract.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from sgwatch.core.events import Remedy
from sgwatch.core.state import ServerState, seconds_between


class PhaseOut(BaseModel):
    name: str
    started_at: str | None
    ended_at: str | None
    seconds: float | None
    started_estimated: bool  # placed by a tqdm bar's own clock, not a log stamp
    ended_estimated: bool


class CaptureOut(BaseModel):
    kind: str
    done: int | None
    total: int | None
    seconds: float | None
    ended: bool


class ThroughputOut(BaseModel):
    samples: int
    gen_tok_s_last: float | None
    gen_tok_s_max: float | None
    gen_tok_s_median: float | None
    accept_len_mean: float | None


class RemedyOut(BaseModel):
    advice: str  # in words: "add --some-flag"
    add: list[list[str]]  # flags to add, each as its words
    drop: list[str]  # flags to take out of the command


class CrashOut(BaseModel):
    summary: str
    exception: str | None
    line: str
    phase: str
    exit_code: int | None
    ts: str | None  # of the first line that said it crashed
    remedy: RemedyOut | None  # the flag change the server's own message says avoids it


class WeightsOut(BaseModel):
    done: int | None
    total: int | None
    seconds: float | None
    mem_usage_gb: dict[str, float]


class CompileOut(BaseModel):
    cache: str | None  # "hit": its graphs loaded from the compile cache; "miss": compiled anew
    seconds: float | None  # torch.compile's whole time as it says, else its graphs' so far


class ServerChangeOut(BaseModel):
    """A feature the server turned off or lowered on its own, as its engine reads it."""

    setting: str  # the engine's name: "cudagraph_mode"
    flag: str  # the option that sets it
    effective: Any  # what it runs with
    requested: Any  # what was asked, when the command or the server says
    effect: str  # what it costs, in a few words
    why: str  # the server's own words, when its log gives them
    override_flag: str | None  # what keeps the server from doing it


class Summary(BaseModel):
    engine: str | None
    version: str | None
    state: str
    ready: bool
    phases: list[PhaseOut]
    graph_captures: list[CaptureOut]
    throughput: ThroughputOut
    crash: CrashOut | None
    lines: int
    # Additions beyond the minimum.
    model: str | None  # from the resolved-arguments dump
    tp_size: int | None
    runs: int
    ready_at: str | None
    warmup_seconds: float | None
    weights: WeightsOut
    kv_cache_tokens: int | None
    max_total_num_tokens: int | None
    requests: int
    compile: CompileOut | None  # None: no torch.compile line in the run
    startup_timings: dict[str, float]  # the server's own, seconds by its step names
    server_startup_s: float | None  # its whole start-up by its own clock, when it reports it
    server_startup_from: str | None  # where it said so: "/metrics", "/server_info"
    server_changes: list[ServerChangeOut]
    ended: str | None  # why the run is over though its log said nothing: its writer is gone


def summarize(s: ServerState, changes: Iterable[ServerChangeOut] = ()) -> Summary:
    """`changes`: what the server's engine reads as changed on its own (the front end
    asks the engine; core does not know one)."""
    t = s.throughput
    return Summary(
        engine=s.engine,
        version=s.version,
        state=s.state,
        ready=s.ready,
        phases=[
            PhaseOut(
                name=p.name,
                started_at=iso(p.started_at),
                ended_at=iso(p.ended_at),
                seconds=p.seconds,
                started_estimated=p.started_estimated,
                ended_estimated=p.ended_estimated,
            )
            for p in s.phases
        ],
        graph_captures=[
            CaptureOut(
                kind=c.kind,
                done=c.done,
                total=c.total,
                seconds=c.seconds if c.seconds is not None else c.bar_elapsed_s,
                ended=not c.open,
            )
            for c in s.captures
        ],
        throughput=ThroughputOut(
            samples=t.samples,
            gen_tok_s_last=t.last,
            gen_tok_s_max=t.max,
            gen_tok_s_median=t.median,
            accept_len_mean=t.accept_len_mean,
        ),
        crash=None
        if s.crash is None
        else CrashOut(
            summary=s.crash.summary,
            exception=s.crash.exception,
            line=s.crash.line,
            phase=s.crash.phase,
            exit_code=s.crash.exit_code,
            ts=iso(s.crash.ts),
            remedy=remedy_out(s.crash.remedy),
        ),
        lines=s.lines,
        model=None if s.identity is None else s.identity.model,
        tp_size=None if s.identity is None else s.identity.tp,
        runs=s.runs,
        ready_at=iso(s.ready_at),
        warmup_seconds=warmup_seconds(s),
        weights=WeightsOut(
            done=s.weights.done,
            total=s.weights.total,
            seconds=s.weights.seconds,
            mem_usage_gb=s.weights.mem_usage_gb,
        ),
        kv_cache_tokens=s.kv_tokens,
        max_total_num_tokens=s.max_total_num_tokens,
        requests=s.requests,
        compile=None
        if s.compile_cache is None and s.compile_s is None
        else CompileOut(cache=s.compile_cache, seconds=s.compile_s),
        startup_timings=dict(s.startup_timings),
        server_startup_s=s.server_startup_s,
        server_startup_from=s.server_startup_from,
        server_changes=list(changes),
        ended=s.ended,
    )


def remedy_out(r: Remedy | None) -> RemedyOut | None:
    if r is None:
        return None
    return RemedyOut(advice=r.advice, add=[list(words) for words in r.add], drop=list(r.drop))


def warmup_seconds(s: ServerState) -> float | None:
    """Start of the run to the ready signal, when both are on record."""
    if not s.ready or not s.phases:
        return None
    start = s.phases[0].started_at
    return seconds_between(start, s.ready_at)


def iso(ts: str | None) -> str | None:
    """A log stamp as ISO-8601 with the `T` separator."""
    return None if ts is None else ts.replace(" ", "T", 1)


def compile_words(cache: str | None, took: str) -> str:
    """What a run's torch.compile showed, `took` as the caller formats it: "compile
    4.2 s, cache hit"."""
    words = "compile" + (f" {took}" if took else "")
    return words + (f", cache {cache}" if cache else "")
