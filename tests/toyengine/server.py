"""The toy engine's server: prints the log a real engine would, and serves nothing.

    python tests/toyengine/server.py --model M [--port P] [--speed X] [--crash-at WHEN]
                                     [--decodes N]

A banner, weights loading and loaded, ready, then a decode line every second until
killed (or N of them, then exit 0); `--crash-at loading` or `--crash-at ready` dies
there with an exception line and exit status 1. `--speed` divides every pause.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime

VERSION = "0.1.0"


def parser() -> argparse.ArgumentParser:
    """The same options as catalog.json."""
    p = argparse.ArgumentParser(prog="toy-server")
    p.add_argument("--model", required=True)
    p.add_argument("--port", type=int, default=7000)
    p.add_argument("--speed", type=float, default=1.0)
    p.add_argument("--crash-at", choices=["loading", "ready"], default=None)
    p.add_argument("--decodes", type=int, default=0)  # 0: until killed
    p.add_argument("--verbose", action="store_true")
    return p


def startup_error(args: list[str]) -> None:
    """What the preflight asks (ENGINE.preflight_request): argparse exits on a bad flag."""
    parser().parse_args(args)


def say(message: str) -> None:
    print(f"[toy {datetime.now():%Y-%m-%d %H:%M:%S}] {message}", flush=True)


def crash(where: str) -> None:
    say(f"fatal: RuntimeError: the toy fell over while {where}")
    sys.exit(1)


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    pause = 1.0 / args.speed
    say(f"toy-engine {VERSION} starting: model={args.model} port={args.port}")
    time.sleep(pause)
    say("loading weights")
    time.sleep(pause)
    if args.crash_at == "loading":
        crash("loading weights")
    say("weights loaded in 1.5 s, 2.0 GB")
    time.sleep(pause)
    say(f"ready on port {args.port}")
    if args.crash_at == "ready":
        crash("serving")
    tokens, done = 100.0, 0
    while not args.decodes or done < args.decodes:
        time.sleep(pause)
        tokens, done = tokens + 1.5, done + 1
        say(f"decode: {tokens:.1f} tok/s, running 1")


if __name__ == "__main__":
    main()
