"""`sgwatch bench HOST`: the bench probe from the command line.

Connects as the dashboard does (an ssh alias, or `localhost`), finds the server
(the only one, or `--pid`; `--port` names one without discovery), and prints a
table or JSON. Exit statuses as cli/exitcodes.py: a server that is not ready, or
a request that failed, is FAILED.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from sgwatch.cli import exitcodes
from sgwatch.cli.args import host_args
from sgwatch.cli.pick import NotPicked, pick
from sgwatch.config import ConfigError, load_config_arg
from sgwatch.control.bench_probe import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_TOKENS,
    BenchFailed,
    BenchProgress,
    BenchResult,
    BenchSettings,
    PromptsError,
    load_prompts,
    prompts_from_texts,
    run_bench,
)
from sgwatch.engines import process_patterns
from sgwatch.remote.discover import DiscoveryFailed, discover
from sgwatch.transport.base import Transport
from sgwatch.transport.errors import TransportError
from sgwatch.transport.factory import transport_for


def add_parser(sub: argparse._SubParsersAction) -> None:
    b = exitcodes.add_command(
        sub,
        "bench",
        help="measure decode tok/s, TTFT and inter-token latency of a running server",
        description="Send a few streamed coding requests to the server's OpenAI-compatible "
        "endpoint through an SSH port forward, one at a time and then N at once, and report "
        "per-request decode tok/s, aggregate tok/s, TTFT and inter-token latency. It starts "
        "only once the server answers /health (warmup done).",
    )
    host_args(b)
    b.add_argument(
        "--concurrency",
        type=_positive,
        default=DEFAULT_CONCURRENCY,
        metavar="N",
        help=f"requests at once in the second phase (default {DEFAULT_CONCURRENCY})",
    )
    b.add_argument(
        "--max-tokens",
        type=_positive,
        default=DEFAULT_MAX_TOKENS,
        metavar="N",
        help=f"tokens each request generates (default {DEFAULT_MAX_TOKENS})",
    )
    b.add_argument("--prompts", metavar="FILE", help="TOML file of [[prompt]] tables (name, text)")
    b.add_argument(
        "--port",
        type=_positive,
        metavar="PORT",
        help="the server's port on the host (default: from its command line)",
    )
    b.add_argument("--pid", type=int, help="the server to measure when several run")
    b.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace, make_transport: Callable[[], Transport] | None = None) -> int:
    try:
        config = load_config_arg(args.config)
        profile = config.host(args.host)
        if args.prompts:
            prompts = load_prompts(Path(args.prompts).expanduser())
        elif profile.bench_prompts:
            prompts = prompts_from_texts(profile.bench_prompts)
        else:
            prompts = load_prompts()
    except (ConfigError, PromptsError) as e:
        print(e, file=sys.stderr)
        return exitcodes.USAGE
    settings = BenchSettings(prompts, args.concurrency, args.max_tokens)
    make = make_transport or (
        lambda: transport_for(args.host, accept_new_host_key=args.accept_new_host_key)
    )
    try:
        return asyncio.run(_bench(make(), args, settings))
    except KeyboardInterrupt:
        print("\nsgwatch bench: interrupted", file=sys.stderr)
        return exitcodes.INTERRUPTED


async def _bench(transport: Transport, args: argparse.Namespace, settings: BenchSettings) -> int:
    from sgwatch.control.server_http import NotReady, open_server  # httpx: only here

    try:
        await transport.connect()
        port = args.port or await _find_port(transport, args)
        async with open_server(transport, port) as api:
            result = await run_bench(api, settings, _progress_printer(sys.stderr))
    except (TransportError, DiscoveryFailed) as e:
        print(f"sgwatch bench: {e}", file=sys.stderr)
        return exitcodes.UNREACHABLE
    except NotPicked as e:
        print(f"sgwatch bench: {e}", file=sys.stderr)
        return e.status
    except (NotReady, BenchFailed) as e:
        print(f"sgwatch bench: {e}", file=sys.stderr)
        return exitcodes.FAILED
    finally:
        await transport.close()
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        sys.stdout.write(render(result))
    return exitcodes.OK


async def _find_port(transport: Transport, args: argparse.Namespace) -> int:
    from sgwatch.engines.port import server_port

    found = await discover(transport, process_patterns())
    return server_port(pick(found.servers, args.pid, args.host).argv)


def _progress_printer(out: TextIO) -> Callable[[BenchProgress], None] | None:
    """A line redrawn in place on a terminal; nothing when stderr is a file or a pipe."""
    if not out.isatty():
        return None

    def show(p: BenchProgress) -> None:
        end = "\n" if p.done == p.total else ""
        out.write(f"\rbench: {p.done}/{p.total} requests (concurrency {p.concurrency})  {end}")
        out.flush()

    return show


def render(r: BenchResult) -> str:
    accept = "" if r.accept_length is None else f", spec accept length {r.accept_length:.2f}"
    out = [
        f"bench {r.target}: {r.model or 'model unknown'}, {r.max_tokens} tokens a request{accept}"
    ]
    for p in r.phases:
        out.append("")
        out.append(
            f"concurrency {p.concurrency}: {len(p.requests)} requests in {p.seconds:.1f} s, "
            f"{p.aggregate_tok_s:.1f} tok/s aggregate, {_num(p.decode_tok_s)} tok/s per request, "
            f"TTFT p50 {_ms(p.ttft_p50_s)} p95 {_ms(p.ttft_p95_s)}, "
            f"ITL p50 {_ms(p.itl_p50_s)} p95 {_ms(p.itl_p95_s)}"
        )
        out.append(
            f"  {'prompt':<16} {'tokens':>6} {'TTFT':>9} {'decode tok/s':>12} "
            f"{'ITL p50':>9} {'ITL p95':>9}"
        )
        for q in p.requests:
            out.append(
                f"  {q.prompt[:16]:<16} {q.output_tokens:>6} {_ms(q.ttft_s):>9} "
                f"{_num(q.decode_tok_s):>12} {_ms(q.itl_p50_s):>9} {_ms(q.itl_p95_s):>9}"
            )
    return "\n".join(out) + "\n"


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value
