"""The read-only tools besides status and wait: `servers`, `events`, `log`, `flags` and
`experiments`, each an answer of a few hundred bytes built on what the dashboard and the
headless commands read."""

from __future__ import annotations

import asyncio
import shlex
from typing import Any

from sgwatch.agent.budget import TEXT_CHARS, clean
from sgwatch.agent.look import looking
from sgwatch.control.controller import Controller
from sgwatch.control.experiments import table
from sgwatch.control.flagedit import describe_changes
from sgwatch.control.history import History
from sgwatch.core.cmdline import LaunchCommand, masked, parse
from sgwatch.engines import by_name, default, for_command
from sgwatch.engines.port import server_port
from sgwatch.engines.shapes.flags import OTHER
from sgwatch.live.records import Event, Tracker
from sgwatch.live.session import Session
from sgwatch.remote.discover import Discovery

Doc = dict[str, Any]
MAX_EVENTS = 12
MAX_LINES = 50
MAX_RUNS = 8


def servers(host: str, found: Discovery) -> Doc:
    """What runs on the host and where each server's output goes."""
    out = []
    for s in found.servers:
        engine = by_name(s.engine)
        cmd = parse(s.argv)
        item: Doc = {
            "pid": s.pid,
            "engine": s.engine,
            "version": s.engine_version,
            "model": engine.model_of(cmd),
            "port": server_port(s.argv),
            "output": clean(s.source.label if s.source else s.log or "unknown", 120),
        }
        if s.source is not None and s.source.problem:
            item["problem"] = clean(s.source.problem, 160)
        out.append({k: v for k, v in item.items() if v is not None})
    return {"host": host, "servers": out}


async def events(session: Session, seconds: float, since: str | None, only: set[str]) -> Doc:
    """The events once the log's past is read (one snapshot of the run: its phase, ready
    or crash), then those of `seconds` more of following; `since` (an ISO time) drops
    the older ones, `only` keeps these kinds."""
    seen: list[Event] = []
    tracker = Tracker(session.watch)

    def collect() -> None:
        for change in tracker.changes():
            event = change.event
            stamp = event.get("ts") or event["time"]
            if only and event["event"] not in only:
                continue
            if since is None or stamp is None or stamp >= since:
                seen.append(_short(event))

    try:
        async with looking(session):
            loop = asyncio.get_running_loop()
            deadline = loop.time() + seconds
            while loop.time() < deadline:
                collect()
                await asyncio.sleep(0.1)
            collect()
    finally:
        tracker.close()
    doc: Doc = {"host": session.watch.label, "events": seen[-MAX_EVENTS:]}
    if len(seen) > MAX_EVENTS:
        doc["earlier_left_out"] = len(seen) - MAX_EVENTS
    return doc


def _short(event: Event) -> Event:
    """An event without its host and empty fields, its texts cleaned and clipped."""
    out = {}
    for k, v in event.items():
        if k == "host" or v is None or v is False:
            continue
        out[k] = clean(v, 160) if isinstance(v, str) else v
    return out


def log(session: Session, lines: int, grep: str | None) -> Doc:
    """The last `lines` lines of the log read (those holding `grep`, any case, each cut
    to show the match)."""
    got, _ = session.watch.take_lines()
    n = max(1, min(lines, MAX_LINES))
    if grep:
        needle = grep.lower()
        got = [_around(line, needle) for line in got if needle in line.lower()][-n:]
    return {
        "host": session.watch.label,
        "source": clean(session.watch.source, 120),
        "lines": [clean(line) for line in got[-n:]],
    }


def _around(line: str, needle: str) -> str:
    """`line` from a little before `needle`, so that the cut keeps the match."""
    line = clean(line, len(line))  # secrets masked before the cut
    at = line.lower().find(needle)
    return line if at < TEXT_CHARS // 2 else "…" + line[at - TEXT_CHARS // 4 :]


async def flags(ctl: Controller) -> Doc:
    """The command's flags by group (the tuning groups only), what the server changed
    against the command, and what it turned off that costs speed."""
    cmd, s = ctl.current, ctl.session.watch.state
    if cmd is None:
        return {"host": ctl.session.watch.label, "error": "no server command known"}
    selection = await ctl.catalog()
    catalog = selection.catalog
    groups: dict[str, list[str]] = {}
    for f in masked(cmd).flags:
        found = catalog.lookup(f.name)
        group = found.option.group if found.option is not None else "unknown to the catalog"
        if group != OTHER:
            groups.setdefault(group, []).append(shlex.join([f.name, *f.values]))
    changed = [
        {
            "flag": d.option,
            "asked": d.requested if d.reason == "overridden" else None,
            "runs_with": d.effective,
            "why": clean(d.why, 120) or None,
        }
        for d in ctl.engine.differences(cmd, s.args, catalog)
        if d.reason == "overridden"
    ]
    speed = ctl.engine.speed_changes(s.args, cmd, s.weights.arch)
    return {
        "host": ctl.session.watch.label,
        "pid": ctl.session.server.pid if ctl.session.server else None,
        "catalog": f"{catalog.engine_label} {catalog.version or '?'} ({selection.source})",
        "flags": groups,
        "server_changed": [{k: v for k, v in c.items() if v is not None} for c in changed],
        "costs_speed": [{"what": clean(d.effect, 80), "keep_with": d.override_flag} for d in speed],
    }


def experiments(host: str) -> Doc:
    """The host's runs from its history, newest last: the flag changes from the first,
    the warmup, tok/s from the log and the bench, and the best one."""
    rows = table(History.kept(host).runs(), None, _describe)
    out = []
    for r in rows[-MAX_RUNS:]:
        item: Doc = {
            "outcome": r.outcome,
            "changes": [clean(d, 80) for d in r.diff[:4]] if not r.baseline else "baseline",
            "warmup_s": r.warmup_s,
            "log_tok_s": r.log_tok_s,
            "bench_c1_tok_s": r.bench_c1_tok_s,
            "best": r.best or None,
        }
        out.append({k: v for k, v in item.items() if v is not None})
    return {"host": host, "runs": len(rows), "latest": out}


def _describe(old: LaunchCommand, new: LaunchCommand) -> list[str]:
    engine = for_command(new) or default()
    return describe_changes(old, new, engine.select_catalog(None, None).catalog)
