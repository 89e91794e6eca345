"""`sgwatch wait HOST` and `sgwatch events HOST --json`: one session, no screen.

The session is built as the dashboard builds one (dashboard.py): the host's profile
from the config, `--log` over discovery, the newest server when there are several
(no one to ask). `wait` prints plain lines and exits with follow()'s code; `events`
prints JSON lines until the log stream ends or Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
from collections.abc import Coroutine
from functools import partial
from typing import Any, TextIO

from sgwatch.config import ConfigError, load_config_arg
from sgwatch.live.follow import follow
from sgwatch.live.session import Session
from sgwatch.live.transitions import Event, to_json, to_line
from sgwatch.live.watch import Watch
from sgwatch.transport.factory import transport_for

BAD_CONFIG = 4  # 0-3 are the outcomes of `wait`
INTERRUPTED = 130  # `wait` stopped by Ctrl-C, as a shell reports SIGINT
_TO_STDERR = {"crash", "timeout"}  # and a link that failed
_COLOUR = {"ready": "\x1b[1;32m", "crash": "\x1b[1;31m"}


def run_wait(args: argparse.Namespace) -> int:
    session = session_for(args)
    if session is None:
        return BAD_CONFIG
    emit = partial(plain, out=sys.stdout, err=sys.stderr)
    code = _run(follow(session, args.until, args.timeout, emit))
    # The script waiting on us resumes when this process exits: spare it the
    # collector's sweep over every module at shutdown (~70 ms on a small VM).
    gc.freeze()
    return INTERRUPTED if code is None else code


def run_events(args: argparse.Namespace) -> int:
    session = session_for(args)
    if session is None:
        return BAD_CONFIG

    def emit(event: Event) -> None:
        print(to_json(event), flush=True)

    lines = partial(plain, out=sys.stdout, err=sys.stdout)
    code = _run(follow(session, None, None, emit if args.json else lines))
    return 0 if code is None else code


def _run(coro: Coroutine[Any, Any, int]) -> int | None:
    try:
        return asyncio.run(coro)
    except KeyboardInterrupt:  # Ctrl-C: follow() has stopped the session on its way out
        return None


def session_for(args: argparse.Namespace) -> Session | None:
    """The session a headless command runs (None: the config is invalid, and said so)."""
    try:
        config = load_config_arg(args.config)
    except ConfigError as e:
        print(e, file=sys.stderr)
        return None
    make = partial(transport_for, args.host, accept_new_host_key=args.accept_new_host_key)
    log = getattr(args, "log", None)
    return Session(Watch(args.host), make, log=log, profile=config.host(args.host))


def plain(event: Event, out: TextIO, err: TextIO) -> None:
    line = to_line(event)
    if line is None:
        return
    failed = event["event"] == "link" and event["state"] == "failed"
    stream = err if event["event"] in _TO_STDERR or failed else out
    if (start := _COLOUR.get(event["event"])) and stream.isatty():
        line = f"{start}{line}\x1b[0m"
    print(line, file=stream, flush=True)
