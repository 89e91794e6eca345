"""Command line: `sgwatch replay LOG [--json]`, `sgwatch --version`."""

from __future__ import annotations

import argparse
import sys
from importlib.resources import as_file, files

from sgwatch import __version__

SAMPLE_LOG = "qwen27b-tp2-warmup.log"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="sgwatch",
        description="Watch an SGLang server warm up and serve: phases, graph captures, "
        "crashes and tok/s.",
    )
    p.add_argument("--version", action="version", version=f"sgwatch {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    r = sub.add_parser(
        "replay",
        help="warmup timeline and run summary of a saved server log",
        description="Read a saved SGLang server log and print its warmup timeline: each "
        "phase with its duration, graph captures done/total, ready or the crash reason, tok/s.",
    )
    src = r.add_mutually_exclusive_group(required=True)
    src.add_argument("logfile", nargs="?", help="the server log to read")
    src.add_argument(
        "--sample", action="store_true", help="replay the bundled sample log (a TP-2 warmup)"
    )
    r.add_argument("--json", action="store_true", help="print the run summary as JSON")
    sub.add_parser(
        "sim",
        help="run the simulated SGLang server (takes SGLang's own flags)",
        add_help=False,
    )
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["sim"]:  # every later flag belongs to the simulated server
        from sgwatch.sim.cli import main as sim_main

        return sim_main(argv[1:])
    args = build_parser().parse_args(argv)
    if args.command == "replay":
        from sgwatch.headless import replay

        if args.sample:
            with as_file(files("sgwatch.samples") / SAMPLE_LOG) as path:
                return replay(str(path), args.json)
        return replay(args.logfile, args.json)
    build_parser().print_help()
    return 0
