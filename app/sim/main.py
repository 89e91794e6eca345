"""`sgwatch sim [SGLANG FLAGS...]` and `python -m sgwatch.sim [SGLANG FLAGS...]`."""

from __future__ import annotations

from sgwatch.sim.args import parse
from sgwatch.sim.server import serve


def main(argv: list[str]) -> int:
    try:
        args = parse(argv)
    except SystemExit as e:  # argparse already printed usage and the error
        return e.code if isinstance(e.code, int) else 2
    return serve(args)
