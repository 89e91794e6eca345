"""Output of `sgwatch replay` (wait and events: wait_events.py)."""

from __future__ import annotations

import sys
from typing import BinaryIO, TextIO

from sgwatch.cli import exitcodes
from sgwatch.core import events as ev
from sgwatch.core.cmdline import MISSING
from sgwatch.core.display import badge, duration_tenths
from sgwatch.core.state import ServerState
from sgwatch.core.summary import ServerChangeOut, Summary, compile_words, summarize
from sgwatch.engines import of_log
from sgwatch.live.ingest import LogIngest

CHUNK = 1 << 20


def read_log(stream: BinaryIO) -> Summary:
    """Stream a whole log through the pipeline; memory stays bounded."""
    ingest = LogIngest()
    while chunk := stream.read(CHUNK):
        ingest.feed(chunk)
    ingest.flush()
    return summarize(ingest.state, server_changes(ingest.state))


def server_changes(s: ServerState) -> list[ServerChangeOut]:
    """What the run's engine reads as turned off or lowered by the server on its own."""
    return [
        ServerChangeOut(
            setting=d.setting,
            flag=d.option,
            effective=d.effective,
            requested=None if d.requested is MISSING else d.requested,
            effect=d.effect,
            why=d.why,
            override_flag=d.override_flag,
        )
        for d in of_log(s.engine).speed_changes(s.args, None, s.weights.arch)
    ]


def replay(path: str, as_json: bool, out: TextIO = sys.stdout) -> int:
    try:
        with open(path, "rb") as f:
            summary = read_log(f)
    except OSError as e:
        print(f"sgwatch replay: cannot read {path}: {e.strerror or e}", file=sys.stderr)
        return exitcodes.USAGE
    if as_json:
        out.write(summary.model_dump_json(indent=2) + "\n")
    else:
        out.write(render_timeline(summary, path))
    return exitcodes.OK


def render_timeline(s: Summary, title: str) -> str:
    engine = " ".join(x for x in (s.engine, s.version) if x) or "engine unknown"
    if s.model:
        engine += f", {s.model}" + (f" TP{s.tp_size}" if s.tp_size else "")
    runs = f", {s.runs} runs (the last is shown)" if s.runs > 1 else ""
    out = [f"{title}: {engine}, {s.lines} lines{runs}"]
    when = s.crash.ts if s.crash is not None else s.ready_at
    out.append(f"state: {badge(s.state)}" + (f" at {_clock(when)}" if when else ""))
    if s.phases:
        out.append("")
        out.append("warmup")
        last = len(s.phases) - 1
        over = s.state not in ev.PHASE_RANK  # warmup is behind the run
        for i, p in enumerate(s.phases):
            done = p.ended_at is not None or i < last or over
            mark = "✓" if done else "…"
            if s.crash and i == last and s.state == "crashed" and s.crash.phase == p.name:
                mark = "✗"
            start = _clock(p.started_at, p.started_estimated)
            span = f"{start:>9} → {_clock(p.ended_at, p.ended_estimated):<9}"
            out.append(f"  {mark} {p.name:<20} {span} {duration_tenths(p.seconds):>9}")
        if s.warmup_seconds is not None:
            own = s.server_startup_s  # by the server's clock, up to its engine being up
            says = "" if own is None else f" (server says {duration_tenths(own)})"
            out.append(f"  total to ready: {duration_tenths(s.warmup_seconds)}{says}")
    if s.weights.total is not None or s.weights.seconds is not None:
        shards = f"{_n(s.weights.done)}/{_n(s.weights.total)} shards"
        took = f", {duration_tenths(s.weights.seconds)}" if s.weights.seconds is not None else ""
        out.append(f"  weights: {shards}{took}")
    if s.compile is not None:
        took = "" if s.compile.seconds is None else duration_tenths(s.compile.seconds)
        out.append(f"  {compile_words(s.compile.cache, took)}")
    if any(p.started_estimated or p.ended_estimated for p in s.phases):
        out.append("  (~ marks a time placed by a progress bar's own clock)")
    if s.graph_captures:
        out.append("")
        out.append("graph captures")
        for c in s.graph_captures:
            mark = "✓" if c.ended else "…"
            count = f"{_n(c.done):>5}/{_n(c.total):<5}"
            out.append(f"  {mark} {c.kind:<13} {count} {duration_tenths(c.seconds):>9}")
    if s.startup_timings:
        out.append("")
        out.append("start-up timings (the server's own)")
        for step, seconds in s.startup_timings.items():
            out.append(f"  {step:<28} {duration_tenths(seconds):>9}")
    if s.server_changes:
        out.append("")
        out.append("changed by the server, costs speed")
        for c in s.server_changes:
            keep = f" → {c.override_flag}" if c.override_flag else ""
            out.append(f"  {c.effect}: {c.why or c.flag}{keep}")
    t = s.throughput
    out.append("")
    if t.samples:
        accept = f", accept len {t.accept_len_mean:.2f}" if t.accept_len_mean is not None else ""
        out.append(
            f"throughput: {t.gen_tok_s_last:.2f} tok/s last, {t.gen_tok_s_median:.2f} median, "
            f"{t.gen_tok_s_max:.2f} max ({t.samples} samples){accept}"
        )
    else:
        out.append("throughput: no decode samples")
    if s.crash is not None:
        out.append("")
        out.append(f"crash (during {s.crash.phase}): {s.crash.summary}")
        if s.crash.exit_code is not None:
            out.append(f"  exit status {s.crash.exit_code}")
        if s.crash.remedy is not None:
            out.append(f"  fix: {s.crash.remedy.advice}")
    return "\n".join(out) + "\n"


def _clock(ts: str | None, estimated: bool = False) -> str:
    if ts is None:
        return "?"
    return ("~" if estimated else "") + ts.split("T")[-1].split(" ")[-1].split(".")[0]


def _n(x: int | None) -> str:
    return "?" if x is None else str(x)
