"""The dashboard's command line (`sgwatch HOST ...`, `sgwatch --demo`), apart from main so
that `launch`, which opens the dashboard on the server it started, can build it too."""

from __future__ import annotations

import argparse

from sgwatch import __version__
from sgwatch.cli import exitcodes
from sgwatch.cli.args import connection_args

# Every command after `sgwatch`, as the dashboard's --help lists it.
COMMANDS = {
    "replay": "replay LOG [--json] | --sample",
    "config": "config check",
    "wait": "wait HOST",
    "events": "events HOST --json",
    "bench": "bench HOST",
    "restart": "restart HOST [--enable|--disable|--set|--unset ...]",
    "launch": "launch HOST -- SERVER COMMAND ...",
    "fleet": "fleet NAME | @GROUP | --prometheus URL [--json | --wait serving | --events]",
    "mcp": "mcp [--allow-actions] [--config FILE]",
    "pods": "pods k8s://[CONTEXT/]NAMESPACE[/WORKLOAD] [--json]",
    "probe-advice": "probe-advice k8s://[CONTEXT/]NAMESPACE[/WORKLOAD]",
    "sim": "sim [SGLANG FLAGS] | vllm serve MODEL [VLLM FLAGS]",
}


def dashboard_parser() -> argparse.ArgumentParser:
    from sgwatch.sim.demo import ENGINES  # the engines the demo's simulator can imitate

    p = argparse.ArgumentParser(
        prog="sgwatch",
        description="Watch SGLang and vLLM servers warm up and serve: phases, graph captures, "
        "crashes, GPUs and tok/s, live over SSH.",
        epilog="other commands:\n"
        + "".join(f"  sgwatch {usage}\n" for usage in COMMANDS.values())
        + "\n"
        + exitcodes.epilog(),
        formatter_class=exitcodes.HelpFormatter,
    )
    p.add_argument("hosts", nargs="*", metavar="HOST", help="ssh alias or user@host[:port]")
    p.add_argument("--demo", action="store_true", help="watch a simulated server on this machine")
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default=ENGINES[0],
        help="with --demo: the engine the simulated server imitates",
    )
    p.add_argument("--log", metavar="PATH", help="follow this log instead of discovering one")
    p.add_argument("--theme", metavar="NAME", help="sgwatch-dark, sgwatch-light or a Textual theme")
    connection_args(p)
    p.add_argument("--no-bell", action="store_true", help="no terminal bell on ready or crash")
    p.add_argument("--version", action="version", version=f"sgwatch {__version__}")
    return p
