"""`sgwatch fleet NAME`: every server of a fleet, one row each.

NAME is a `[fleets.NAME]` of the config (a Prometheus query API, or pods), `@GROUP` (a
config group of SSH hosts, no Prometheus), a `k8s://[CONTEXT/]NAMESPACE[/WORKLOAD]`
address (its pods' logs, fleet/pods.py), or absent with `--prometheus URL` for a one-off
look. A Prometheus fleet's rows that are down and map to an SSH host are followed
there (fleet/follow.py). Without --json, --wait or --events: the fleet table.
Exit statuses (docs/design/fleet-follow.md): --json 0, or 3 when the source did not
answer; --wait serving 0 all up, 1 one crashed, 3 the source never answered,
4 it answered with no server, 5 timed out.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from sgwatch.cli import exitcodes, lifeline
from sgwatch.cli.args import connection_args
from sgwatch.cli.notty import terminal
from sgwatch.config import ConfigError, load_config_arg
from sgwatch.control.headless import log_places
from sgwatch.control.probes import ProbeGuard
from sgwatch.fleet.as_json import snapshot_json
from sgwatch.fleet.follow import AT_ONCE, UP
from sgwatch.fleet.open import Refused, look_once, open_source
from sgwatch.fleet.row import FleetRow
from sgwatch.fleet.source import FleetSnapshot, FleetSource
from sgwatch.live.records import utc_now

# A crash first seen without its cause (the process gone before its last lines were
# read) gets this long for the log's own account before it is reported.
CRASH_SETTLE_S = 1.0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = exitcodes.add_command(
        sub,
        "fleet",
        help="every server of a fleet (Prometheus, or a group of SSH hosts), one row each",
        description="One row per server: engine, model, state, tok/s, requests, KV cache, "
        "GPUs. NAME is a [fleets.NAME] of the config, or @GROUP (a config group of SSH hosts). "
        "Servers Prometheus sees down that map to an SSH host are followed there: warming "
        "with the phase and capture progress, or crashed with the cause. --wait serving: "
        f"{exitcodes.OK} when every server is up, {exitcodes.FAILED} when one crashed, "
        f"{exitcodes.UNREACHABLE} when the source never answered, {exitcodes.NO_SERVER} when it "
        f"listed no server, {exitcodes.TIMED_OUT} on --timeout.",
    )
    p.add_argument(
        "name", nargs="?", metavar="NAME", help="a [fleets.NAME], @GROUP, or k8s://[CTX/]NS[/WL]"
    )
    p.add_argument("--prometheus", metavar="URL", help="a one-off look at this query API")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--json", action="store_true", help="one snapshot as a JSON object")
    mode.add_argument(
        "--wait", choices=["serving"], help="block until every server is up (see above)"
    )
    mode.add_argument("--events", action="store_true", help="a JSON line per state change")
    p.add_argument("--timeout", type=float, metavar="S", help="with --wait: give up after S s")
    p.add_argument(
        "--every", type=float, metavar="S", help="seconds between refreshes (default: the fleet's)"
    )
    p.add_argument(
        "--follow",
        type=_at_least_one,
        metavar="N",
        help="follow at most N down servers over SSH at once; the rest queue "
        f"(default: the fleet's follow, else {AT_ONCE})",
    )
    connection_args(p)


def _at_least_one(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config_arg(args.config)
        source, every = open_source(
            config,
            args.name,
            log_places(os.environ),
            prometheus=args.prometheus,
            accept_new_host_key=args.accept_new_host_key,
            at_once=args.follow,
            guard=ProbeGuard,  # a pod's warmup against its probes, its runs recorded
        )
    except (ConfigError, Refused) as e:  # exit 2
        print(f"sgwatch fleet: {e}", file=sys.stderr)
        return exitcodes.USAGE
    every = args.every or every
    if args.json:
        return _run(one_look(source, sys.stdout))
    if args.wait:
        return _run(wait_serving(source, args.timeout, every))
    if args.events:
        return _run(events(source, every), interrupted=exitcodes.OK)
    if not terminal():
        print(
            "sgwatch fleet: the table needs a terminal; without one use --json, "
            "--wait serving or --events",
            file=sys.stderr,
        )
        return exitcodes.USAGE
    from sgwatch.ui.fleet_app import run_fleet_dashboard  # Textual: only for the table

    return run_fleet_dashboard(
        source,
        config=config,
        accept_new_host_key=args.accept_new_host_key,
        interval_s=every,
        # a closed terminal or a kill ends the table within 2 s, its SSH sessions with it
        before_run=lambda app: lifeline.install(lambda: _exit_soon(app)),
    )


def _exit_soon(app) -> None:
    """`app.exit()`, from a signal handler: called there, it queues a message without
    waking the loop, which sleeps on until its next timer (the refresh's, seconds away)
    and misses the lifeline's grace (the terminal then left as the table had it)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not running yet, or no more
        app.exit()
    else:
        loop.call_soon_threadsafe(app.exit)  # writes to the loop's wakeup pipe


async def one_look(source: FleetSource, out) -> int:
    snap = await look_once(source)
    print(json.dumps(snapshot_json(source.name, snap)), file=out, flush=True)
    return exitcodes.UNREACHABLE if snap.stale else exitcodes.OK


async def wait_serving(source: FleetSource, timeout: float | None, every: float) -> int:
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    answered, shown = False, {}
    new: tuple[str, ...] = ()  # targets found, not yet scraped: not up yet either
    try:
        while True:
            snap = await source.snapshot()
            answered = answered or not snap.stale
            for row in _changes(snap, shown):
                print(_line(row), flush=True)
            if any(r.state == "crashed" for r in snap.rows):
                await asyncio.sleep(CRASH_SETTLE_S)
                snap = await source.snapshot()
            if crashed := [r for r in snap.rows if r.state == "crashed"]:
                for row in crashed:
                    print(f"{row.instance} crashed: {row.detail}", file=sys.stderr, flush=True)
                return exitcodes.FAILED
            if not snap.stale and snap.rows and all(r.state in UP for r in snap.rows):
                told, new = new, await source.unscraped()
                for instance in sorted(set(new) - set(told)):
                    print(f"{instance}: new, not yet scraped", flush=True)
                if not new:
                    print(f"all {len(snap.rows)} servers of {source.name} are up", flush=True)
                    return exitcodes.OK
            else:
                new = ()
            if deadline is not None and loop.time() >= deadline:
                return _timed_out(source.name, snap, answered, timeout, new)
            left = every if deadline is None else min(every, deadline - loop.time())
            await asyncio.sleep(max(left, 0.0))
    finally:
        await source.close()


def _timed_out(
    name: str, snap: FleetSnapshot, answered: bool, timeout: float | None, new: tuple[str, ...]
) -> int:
    if not answered:
        print(f"{name}: no answer within {timeout:g} s: {snap.problem}", file=sys.stderr)
        return exitcodes.UNREACHABLE
    if not snap.rows:
        print(f"{name}: no server within {timeout:g} s", file=sys.stderr)
        return exitcodes.NO_SERVER
    down = [f"{r.instance} ({r.state})" for r in snap.rows if r.state not in UP]
    down += [f"{instance} (not yet scraped)" for instance in new]
    listed = ", ".join(down)
    known = len(snap.rows) + len(new)
    print(
        f"timed out after {timeout:g} s: {len(down)} of {known} not up: {listed}",
        file=sys.stderr,
    )
    return exitcodes.TIMED_OUT


async def events(source: FleetSource, every: float) -> int:
    """A JSON line per row state change (each row's state first), and when the source
    stops or starts answering, until Ctrl-C."""
    shown: dict[str, str] = {}
    stale = False
    try:
        while True:
            snap = await source.snapshot()
            if snap.stale != stale:
                stale = snap.stale
                record = {"event": "source", "fleet": source.name, "time": utc_now()}
                print(json.dumps({**record, "stale": stale, "problem": snap.problem}), flush=True)
            was = dict(shown)
            for row in _changes(snap, shown):
                print(json.dumps(_state_event(source.name, row, was.get(row.key))), flush=True)
            await asyncio.sleep(every)
    finally:
        await source.close()


def _state_event(fleet: str, row: FleetRow, was: str | None) -> dict:
    fields = ("key", "instance", "host", "engine", "model", "state", "detail")
    return {
        "event": "state",
        "fleet": fleet,
        "time": utc_now(),
        **{f: getattr(row, f) for f in fields},
        "was": was,
    }


def _changes(snap: FleetSnapshot, shown: dict[str, str]) -> list[FleetRow]:
    """The rows whose state is not the one last shown (`shown` is brought up to date)."""
    changed = [r for r in snap.rows if shown.get(r.key) != r.state]
    for r in changed:
        shown[r.key] = r.state
    return changed


def _line(row: FleetRow) -> str:
    return f"{row.instance}: {row.state}" + (f" ({row.detail})" if row.detail else "")


def _run(coro, interrupted: int = exitcodes.INTERRUPTED) -> int:
    try:
        return asyncio.run(coro)
    except KeyboardInterrupt:  # the source was closed on the way out
        return interrupted
