"""`sgwatch sim [SGLANG FLAGS...]` and `python -m sgwatch.sim [SGLANG FLAGS...]`;
`python -m sgwatch.sim vllm serve MODEL [VLLM FLAGS...]` is the simulated vLLM."""

from __future__ import annotations

from sgwatch.sim.common.proctree import outlive_no_owner
from sgwatch.sim.sglang.args import parse
from sgwatch.sim.sglang.processes import import_time
from sgwatch.sim.sglang.server import serve


def main(argv: list[str]) -> int:
    outlive_no_owner()  # the demo's server, however started, ends with its sgwatch
    if argv[:2] == ["vllm", "serve"]:
        return _vllm(argv[2:])
    import_time(argv)  # SGLang parses its arguments only once its imports are done
    try:
        args = parse(argv)
    except SystemExit as e:  # argparse already printed usage and the error
        return e.code if isinstance(e.code, int) else 2
    return serve(args)


def _vllm(argv: list[str]) -> int:
    from sgwatch.sim.vllm.args import parse as parse_vllm
    from sgwatch.sim.vllm.server import serve as serve_vllm

    try:
        args = parse_vllm(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    return serve_vllm(args)
