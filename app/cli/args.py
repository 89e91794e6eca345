"""What every command that reaches a host takes: the host, --config, --accept-new-host-key."""

from __future__ import annotations

import argparse


def host_args(p: argparse.ArgumentParser, log: bool = False) -> None:
    p.add_argument("host", metavar="HOST", help="ssh alias, user@host[:port] or localhost")
    if log:
        p.add_argument("--log", metavar="PATH", help="follow this log instead of discovering one")
    connection_args(p)


def connection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE", help="configuration file (default: XDG location)")
    p.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust and remember a host key seen for the first time (never a changed one)",
    )
