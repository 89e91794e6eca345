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
    c = sub.add_parser("config", help="check the configuration file")
    c.add_argument("action", choices=["check"], help="validate the file and report problems")
    c.add_argument("--config", metavar="FILE", help="the file (default: the XDG location)")
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
    if args.command == "config":
        return _config_check(args.config)
    build_parser().print_help()
    return 0


def _config_check(path: str | None) -> int:
    from pathlib import Path

    from sgwatch.config import ConfigError, default_path, load_config

    where = Path(path) if path else default_path()
    try:
        cfg = load_config(where if path else None)
    except ConfigError as e:
        print(e, file=sys.stderr)
        return 2
    if not where.exists():
        print(f"{where}: no file; the defaults apply")
    else:
        print(f"{where}: ok ({len(cfg.hosts)} host profiles, {len(cfg.groups)} groups)")
    return 0
