"""`sgwatch wait HOST` and `sgwatch events HOST --json`: one session, no screen.

The session is built as the dashboard builds one (dashboard.py): the host's profile
from the config, `--log` over discovery. With no one to ask, several servers need
`--pid`, and several logs of servers that are gone (no server running) `--log`; a
named log that is not there is waited for only while --timeout allows,
or MISSING_LOG_GRACE without one. `wait` prints plain lines and exits with the
status of follow()'s outcome (with --quiet --every S, a status line every S seconds
instead of its lines: heartbeat.py); `events` prints JSON lines until the log stream
ends or Ctrl-C, each with the stream's version `v` (docs/design/events.md).
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import gc
import os
import sys
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any, TextIO

from sgwatch.cli import exitcodes, heartbeat, pods
from sgwatch.cli.args import host_args
from sgwatch.cli.ceiling import with_ceiling
from sgwatch.config import ConfigError, load_config_arg
from sgwatch.control.headless import MISSING_LOG_GRACE, headless_session
from sgwatch.control.headless import PLACES_ENV as PLACES_ENV  # where tests name it
from sgwatch.live import follow as following
from sgwatch.live.choice import Unfollowed
from sgwatch.live.records import KINDS, Event, Throttle, to_json, to_line
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch

# `events --json`'s `v`: raised only when a field is renamed, removed or changes its
# meaning; fields may be added under the same version (docs/design/events.md).
STREAM_VERSION = 1
DEFAULT_EVERY = 10.0  # seconds between two progress lines of `wait`
_TO_STDERR = {"crash", "timeout"}  # and a link that failed
_COLOUR = {"ready": "\x1b[1;32m", "crash": "\x1b[1;31m"}
_STATUS = {
    following.READY: exitcodes.OK,
    following.CRASHED: exitcodes.FAILED,
    following.TIMED_OUT: exitcodes.TIMED_OUT,
    following.UNREACHABLE: exitcodes.UNREACHABLE,
    following.ENDED: exitcodes.NO_SERVER,  # a gone server's log that ended serving
}
_GAVE_UP = {Unfollowed.NO_SERVER: exitcodes.NO_SERVER, Unfollowed.AMBIGUOUS: exitcodes.AMBIGUOUS}


def add_parsers(sub: argparse._SubParsersAction) -> None:
    w = exitcodes.add_command(
        sub,
        "wait",
        help="block until the server is ready; the exit status says how it went",
        description="Follow the server on HOST without a screen: a line when a phase "
        "starts and a progress line (N/M, rate, ETA) at most every --every seconds, until "
        "it is ready (or serving), crashed (the crash summary on stderr) or --timeout "
        "passes. A --log that does not exist yet is waited for up to --timeout, or "
        f"{MISSING_LOG_GRACE:g} s without one.",
    )
    _follow_args(w)
    until_args(w)
    w.add_argument(
        "--since",
        action="store_true",
        help="only a run from now on: an earlier run that crashed or stopped does not count; "
        "with no server, look again until one starts",
    )
    w.add_argument(
        "--quiet",
        action="store_true",
        help="print only the outcome; with --every S, also one status line every S seconds "
        "(phase, capture N/M, ETA)",
    )
    w.set_defaults(every=None)  # given or not: --quiet alone prints the outcome only
    e = exitcodes.add_command(
        sub,
        "events",
        help="the server's events as JSON lines (phase, progress, throughput, gpu, ...)",
        description="Follow the server on HOST and print its events, one per line, until "
        f"the log stream ends or Ctrl-C (both {exitcodes.OK}). A --log that does not exist "
        f"yet is waited for {MISSING_LOG_GRACE:g} s.",
    )
    _follow_args(e)
    e.add_argument("--json", action="store_true", help="JSON lines (else plain lines)")
    e.add_argument(
        "--only",
        type=_kinds,
        metavar="KINDS",
        help=f"only these kinds, comma-separated: {','.join(KINDS)}",
    )
    e.add_argument(
        "--every",
        type=float,
        default=0.0,
        metavar="S",
        help="a progress event at most every S seconds (default 0: every step)",
    )


def _kinds(text: str) -> frozenset[str]:
    kinds = frozenset(k.strip() for k in text.split(",") if k.strip())
    if unknown := sorted(kinds - set(KINDS)):
        raise argparse.ArgumentTypeError(
            f"unknown kind {', '.join(unknown)} (kinds: {', '.join(KINDS)})"
        )
    return kinds


def until_args(p: argparse.ArgumentParser, given: str = "") -> None:
    """--until, --timeout and --every, as wait takes them (`given`: the flag they go with)."""
    p.add_argument(
        "--until",
        choices=["ready", "serving"],
        default="ready",
        help=f"{given}the state to wait for",
    )
    p.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help=f"{given}give up after S seconds (exit {exitcodes.TIMED_OUT})",
    )
    every_arg(p)


def every_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--every",
        type=float,
        default=DEFAULT_EVERY,
        metavar="S",
        help=f"a progress line at most every S seconds (default {DEFAULT_EVERY:g}; 0: every step)",
    )


def progress_lines(every: float) -> Callable[[Event], None]:
    """Plain lines as `wait` prints them: a progress line at most every `every` seconds."""
    passes = Throttle(every)

    def emit(event: Event) -> None:
        if passes(event):
            plain(event, out=sys.stdout, err=sys.stderr)

    return emit


def _follow_args(p: argparse.ArgumentParser) -> None:
    host_args(p, log=True)
    p.add_argument("--pid", type=int, help="the server to follow when several run")


def run_wait(args: argparse.Namespace) -> int:
    beat = args.quiet and args.every is not None
    if beat and args.every <= 0:
        print("sgwatch wait: --quiet --every S needs S > 0 seconds", file=sys.stderr)
        return exitcodes.USAGE
    session = session_for(args, args.timeout, since_now=args.since)
    if session is None:
        return exitcodes.USAGE
    lines = partial(plain, out=sys.stdout, err=sys.stderr)
    passes = Throttle(DEFAULT_EVERY if args.every is None else args.every)

    def emit(event: Event) -> None:
        if args.quiet or passes(event):
            lines(event)

    def follow(emit: Callable[[Event], None]) -> Coroutine[Any, Any, str]:
        return following.follow(session, args.until, args.timeout, emit, outcome_only=args.quiet)

    outcome = _run(_beating(follow, session.watch, args.every, emit) if beat else follow(emit))
    # The script waiting on us resumes when this process exits: spare it the
    # collector's sweep over every module at shutdown (~70 ms on a small VM).
    gc.freeze()
    return exitcodes.INTERRUPTED if outcome is None else exit_status(outcome, session)


def run_events(args: argparse.Namespace) -> int:
    session = session_for(args)
    if session is None:
        return exitcodes.USAGE

    lines = partial(plain, out=sys.stdout, err=sys.stdout)
    passes = Throttle(args.every)

    def emit(event: Event) -> None:
        if (args.only is None or event["event"] in args.only) and passes(event):
            if args.json:
                if event["event"] == "throughput":
                    event = with_ceiling(event, session)
                print(to_json({"v": STREAM_VERSION, **event}), flush=True)
            else:
                lines(event)

    emit = pods.probe_events(session, emit)
    outcome = _run(following.follow(session, None, None, emit))
    return exitcodes.OK if outcome is None else exit_status(outcome, session)


async def _beating(
    follow: Callable[[Callable[[Event], None]], Coroutine[Any, Any, str]],
    watch: Watch,
    every: float,
    emit: Callable[[Event], None],
) -> str:
    """`follow(emit)`, with the status line said every `every` seconds until the outcome
    is: the outcome stays the last line while `follow` stops its session after it."""
    beat = asyncio.create_task(heartbeat.beat(watch, every, partial(print, flush=True)))

    def said(event: Event) -> None:
        beat.cancel()  # raised at its sleep when it next runs: no status line after this
        emit(event)

    try:
        return await follow(said)
    finally:
        beat.cancel()


def exit_status(outcome: str, session: Session) -> int:
    """The status for how following `session` ended: the host answering with nothing
    to follow is not the host being unreachable."""
    if outcome == following.UNREACHABLE and session.unfollowed is not None:
        return _GAVE_UP[session.unfollowed]
    return _STATUS[outcome]


def _run(coro: Coroutine[Any, Any, str]) -> str | None:
    try:
        return asyncio.run(coro)
    except KeyboardInterrupt:  # Ctrl-C: follow() has stopped the session on its way out
        return None
    except OSError as e:  # the terminal (EIO) or our reader (EPIPE) went away: as Ctrl-C
        if e.errno not in (errno.EIO, errno.EPIPE):
            raise
        # what is still buffered for stdout can never be written: drop it quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return None


def session_for(
    args: argparse.Namespace, timeout: float | None = None, since_now: bool = False
) -> Session | None:
    """The session a headless command runs (None: the config is invalid, and said so).
    A missing --log is waited for up to `timeout` when one is given; `since_now`: only
    a run from now on counts (wait --since)."""
    try:
        config = load_config_arg(args.config)
    except ConfigError as e:
        print(e, file=sys.stderr)
        return None
    try:
        address = pods.pod_address(args.host, config)
    except ValueError as e:
        print(e, file=sys.stderr)
        return None
    if address is not None:  # pods, through kubectl
        return pods.pod_session(args.host, address, args.command, since_now)
    return headless_session(
        args.host,
        config,
        log=getattr(args, "log", None),
        pid=getattr(args, "pid", None),
        accept_new_host_key=args.accept_new_host_key,
        timeout=timeout,
        since_now=since_now,
    )


def plain(event: Event, out: TextIO, err: TextIO) -> None:
    line = to_line(event)
    if line is None:
        return
    failed = event["event"] == "link" and event["state"] == "failed"
    stream = err if event["event"] in _TO_STDERR or failed else out
    if (start := _COLOUR.get(event["event"])) and stream.isatty():
        line = f"{start}{line}\x1b[0m"
    print(line, file=stream, flush=True)
