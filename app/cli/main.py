"""Command line: the dashboard over SGLang and vLLM servers, and the other commands.

sgwatch HOST [HOST ...]     the dashboard, a tab per host ("localhost": no SSH)
sgwatch --demo              the dashboard over a simulated server on this machine
sgwatch replay LOG [--json] the warmup timeline of a saved log
sgwatch config check        validate the configuration file
sgwatch wait HOST           block until the server is ready, crashed or --timeout passed
sgwatch events HOST --json  the server's events as JSON lines
sgwatch bench HOST          tok/s, TTFT and inter-token latency of the running server
sgwatch restart HOST --enable NAME ...   edit the server's flags, restart it, wait for ready
sgwatch launch HOST -- COMMAND           check a server's command, start it with a log, watch it
sgwatch fleet NAME [--json]  every server of a fleet (Prometheus, or @GROUP over SSH)
sgwatch mcp [--allow-actions]           an MCP server over stdio, for agents
sgwatch pods k8s://[CTX/]NS[/WORKLOAD]   the SGLang and vLLM servers in those pods
sgwatch probe-advice k8s://...           a startupProbe sized from recorded warmups
sgwatch sim [SGLANG FLAGS]  the simulated SGLang server (`sim vllm serve MODEL ...`: vLLM)
"""

from __future__ import annotations

import argparse
import sys
from importlib.resources import as_file, files
from pathlib import Path

from sgwatch.cli import exitcodes
from sgwatch.cli.dashboard_args import COMMANDS, dashboard_parser

SAMPLE_LOG = "qwen27b-tp2-warmup.log"


def commands_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sgwatch")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    r = exitcodes.add_command(
        sub,
        "replay",
        help="warmup timeline and run summary of a saved server log",
        description="Read a saved SGLang or vLLM server log and print its warmup timeline: each "
        "phase with its duration, graph captures done/total, ready or the crash reason, tok/s. "
        f"A crash in the log is part of the summary: the status is {exitcodes.OK} whenever the "
        "file could be read.",
    )
    src = r.add_mutually_exclusive_group(required=True)
    src.add_argument("logfile", nargs="?", help="the server log to read")
    src.add_argument(
        "--sample", action="store_true", help="replay the bundled sample log (a TP-2 warmup)"
    )
    r.add_argument("--json", action="store_true", help="print the run summary as JSON")
    c = exitcodes.add_command(
        sub,
        "config",
        help="check the configuration file",
    )
    c.add_argument("action", choices=["check"], help="validate the file and report problems")
    c.add_argument("--config", metavar="FILE", help="the file (default: the XDG location)")
    from sgwatch.cli.wait_events import add_parsers as add_wait_events

    add_wait_events(sub)
    from sgwatch.cli.bench import add_parser as add_bench

    add_bench(sub)
    from sgwatch.cli.restart import add_parser as add_restart

    add_restart(sub)
    from sgwatch.cli.launch import add_parser as add_launch

    add_launch(sub)
    from sgwatch.cli.pods import add_parsers as add_pods

    add_pods(sub)
    from sgwatch.cli.mcp import add_parser as add_mcp

    add_mcp(sub)
    from sgwatch.cli.fleet import add_parser as add_fleet

    add_fleet(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["sim"]:  # every later flag belongs to the simulated server
        from sgwatch.sim.main import main as sim_main

        return sim_main(argv[1:])
    if argv[:1] and argv[0] in COMMANDS:
        server: list[str] = []
        if argv[0] == "launch" and "--" in argv:  # the server's command, not sgwatch's flags
            at = argv.index("--")
            argv, server = argv[:at], argv[at + 1 :]
        args = commands_parser().parse_args(argv)
        if args.command == "replay":
            return _replay(args)
        if args.command == "restart":
            from sgwatch.cli.restart import run as run_restart

            return run_restart(args)
        if args.command == "launch":
            from sgwatch.cli.launch import run as run_launch

            return run_launch(args, server)
        if args.command == "fleet":
            from sgwatch.cli.fleet import run as run_fleet

            return run_fleet(args)
        if args.command == "mcp":
            from sgwatch.cli.mcp import run as run_mcp

            return run_mcp(args)
        if args.command in ("pods", "probe-advice"):
            from sgwatch.cli.pods import run_pods, run_probe_advice

            return run_pods(args) if args.command == "pods" else run_probe_advice(args)
        if args.command == "bench":
            from sgwatch.cli.bench import run as run_bench

            return run_bench(args)
        if args.command in ("wait", "events"):
            from sgwatch.cli.wait_events import run_events, run_wait

            return run_wait(args) if args.command == "wait" else run_events(args)
        return _config_check(args.config)
    args = dashboard_parser().parse_args(argv)
    if not args.hosts and not args.demo:
        dashboard_parser().print_help()
        return exitcodes.OK
    from sgwatch.cli.dashboard import run_dashboard
    from sgwatch.engines import all_engines

    all_engines()  # a plug-in engine that fails to load says so before the screen is drawn
    return run_dashboard(args)


def _replay(args: argparse.Namespace) -> int:
    from sgwatch.cli.replay import replay

    if args.sample:
        with as_file(files("sgwatch.samples") / SAMPLE_LOG) as path:
            return replay(str(path), args.json)
    return replay(args.logfile, args.json)


def _config_check(path: str | None) -> int:
    from sgwatch.config import ConfigError, default_path, load_config

    where = Path(path) if path else default_path()
    try:
        cfg = load_config(where if path else None)
    except ConfigError as e:
        print(e, file=sys.stderr)
        return exitcodes.USAGE
    if not where.exists():
        print(f"{where}: no file; the defaults apply")
    else:
        sizes = (len(cfg.hosts), len(cfg.groups), len(cfg.fleets))
        counts = "{} host profiles, {} groups, {} fleets".format(*sizes)
        print(f"{where}: ok ({counts})")
    return exitcodes.OK
