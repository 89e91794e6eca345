"""A stand-in for NVIDIA's dcgm-exporter, answering `/metrics` from the simulated GPUs.

    python -m sgwatch.sim.common.dcgm --port 9400 [--host 127.0.0.1] [--hostname NODE]

Serves dcgm-exporter's default counters that a fleet reads (names, units and labels
as its etc/default-counters.csv and its exporter write them): utilisation in %,
frame-buffer memory used and free in MiB, power in W, temperature in C, and the last
XID error (0: none). Each card carries `gpu`, `UUID`, `pci_bus_id`, `device`,
`modelName` and `Hostname` (the node's name; --hostname sets it, as the exporter's
NODE_NAME does). The cards are the simulated servers' shared state (gpustate.py), so
a simulated server loading weights shows here as it does in the nvidia-smi stand-in.
Prints `listening on HOST:PORT` once serving (--port 0: a free port).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys

from sgwatch.sim.common import gpustate
from sgwatch.sim.common.gpustate import Card, GpuSpec
from sgwatch.sim.common.http import HttpServer, Request, Response, json_response

# name -> (help as dcgm-exporter writes it, value of a card)
FIELDS = {
    "DCGM_FI_DEV_GPU_TEMP": ("GPU temperature (in C).", lambda c: float(c.temp_c)),
    "DCGM_FI_DEV_POWER_USAGE": ("Power draw (in W).", lambda c: round(c.power_w, 3)),
    "DCGM_FI_DEV_GPU_UTIL": ("GPU utilization (in %).", lambda c: float(round(c.util))),
    "DCGM_FI_DEV_FB_FREE": (
        "Framebuffer memory free (in MiB).",
        lambda c: float(round(c.total_mib - c.used_mib)),
    ),
    "DCGM_FI_DEV_FB_USED": (
        "Framebuffer memory used (in MiB).",
        lambda c: float(round(c.used_mib)),
    ),
    "DCGM_FI_DEV_XID_ERRORS": (
        "Value of the last XID error encountered.",
        lambda _c: 0.0,
    ),
}
DRIVER = "570.133.20"


def page(cards: list[Card], hostname: str) -> str:
    """The exposition text dcgm-exporter would serve for `cards`."""
    lines = []
    for name, (help_text, value) in FIELDS.items():
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
        for c in cards:
            labels = (
                f'gpu="{c.index}",UUID="{gpustate.uuid(c.index)}",'
                f'pci_bus_id="{gpustate.bus_id(c.index)}",device="nvidia{c.index}",'
                f'modelName="{c.name}",Hostname="{hostname}",DCGM_FI_DRIVER_VERSION="{DRIVER}"'
            )
            lines.append(f"{name}{{{labels}}} {value(c):g}")
    return "\n".join(lines) + "\n"


async def serve(host: str, port: int, hostname: str) -> None:
    spec = GpuSpec.from_env()

    async def handle(req: Request) -> Response:
        if req.path != "/metrics":
            return json_response({"detail": "Not Found"}, 404)
        body = page(gpustate.read(spec), hostname).encode()
        return Response(200, body, "text/plain; version=0.0.4; charset=utf-8")

    sock = socket.create_server((host, port))
    server = HttpServer(handle, lambda _line: None)
    await server.start(host, port, sock=sock)
    bound = sock.getsockname()
    print(f"listening on {bound[0]}:{bound[1]}", flush=True)
    await asyncio.Event().wait()  # until killed


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="dcgm-exporter (simulated)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9400)
    p.add_argument("--hostname", default=socket.gethostname(), help="the Hostname label")
    args = p.parse_args(argv)
    try:
        asyncio.run(serve(args.host, args.port, args.hostname))
    except KeyboardInterrupt:
        return 0
    except OSError as e:
        print(
            f"dcgm-exporter (simulated): cannot listen on {args.host}:{args.port}: {e}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
