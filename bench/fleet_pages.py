"""Many servers' /metrics pages from one process, for Prometheus to scrape at scale.

    python bench/fleet_pages.py N GPUS    # prints one JSON line: the ports, then serves

N servers (even: vLLM's names, odd: SGLang's), each on a loopback port of its own,
and one dcgm-exporter page per server's node (GPUS cards) on another port. A page
holds the series a fleet refresh reads, as the engine names them, with counters and
histogram buckets growing with the wall clock; 1 % of the servers answer HTTP 503,
as a server Prometheus cannot read. One asyncio process serves them all: a simulator
per server would not fit this machine, and Prometheus's cost depends on the series it
holds, not on who wrote them.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time

BUCKETS = ("0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf")
NAMES = {  # engine -> (counter, running, waiting, kv, ttft, itl)
    "sglang": ("sglang:generation_tokens", "sglang:num_running_reqs", "sglang:num_queue_reqs",
               "sglang:token_usage", "sglang:time_to_first_token_seconds",
               "sglang:inter_token_latency_seconds"),
    "vllm": ("vllm:generation_tokens", "vllm:num_requests_running", "vllm:num_requests_waiting",
             "vllm:kv_cache_usage_perc", "vllm:time_to_first_token_seconds",
             "vllm:inter_token_latency_seconds"),
}  # fmt: skip
DCGM = (
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_POWER_USAGE",
)
START = time.time()


def address(i: int) -> str:
    """The address server i and its node have in the bench's fleet (its instance)."""
    return f"10.0.{i // 250}.{i % 250}"


def down(i: int) -> bool:
    return i % 100 == 99


def engine_of(i: int) -> str:
    return "sglang" if i % 2 else "vllm"


def server_page(i: int) -> str:
    counter, running, waiting, kv, ttft, itl = NAMES[engine_of(i)]
    grow = time.time() - START + 1000
    lab = f'model_name="m{i % 7}",engine="0"'
    lines = [
        f"# TYPE {counter} counter",
        f"{counter}_total{{{lab}}} {grow * (40 + i % 50):.1f}",
        f"# TYPE {running} gauge\n{running}{{{lab}}} {i % 9}",
        f"# TYPE {waiting} gauge\n{waiting}{{{lab}}} {i % 3}",
        f"# TYPE {kv} gauge\n{kv}{{{lab}}} {(i % 10) / 10}",
    ]
    for hist in (ttft, itl):
        lines.append(f"# TYPE {hist} histogram")
        lines += [
            f'{hist}_bucket{{{lab},le="{le}"}} {grow * (b + 1):.1f}' for b, le in enumerate(BUCKETS)
        ]
        lines += [
            f"{hist}_count{{{lab}}} {grow * len(BUCKETS):.1f}",
            f"{hist}_sum{{{lab}}} {grow * 0.3:.1f}",
        ]
    return "\n".join(lines) + "\n"


def dcgm_page(i: int, gpus: int) -> str:
    lines = []
    for k, name in enumerate(DCGM):
        lines.append(f"# TYPE {name} gauge")
        lines += [
            f'{name}{{gpu="{g}",Hostname="node{i}",modelName="H100"}} {40 + g + k}'
            for g in range(gpus)
        ]
    return "\n".join(lines) + "\n"


async def serve(n: int, gpus: int) -> None:
    async def answer(page, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                body = page()
                status = "200 OK" if body is not None else "503 Service Unavailable"
                data = (body or "").encode()
                head = f"HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\n"
                writer.write(f"{head}Content-Length: {len(data)}\r\n\r\n".encode() + data)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    ports: dict[str, list[int]] = {"servers": [], "dcgm": []}
    for i in range(n):
        for kind, page in (
            ("servers", (lambda i=i: None if down(i) else server_page(i))),
            ("dcgm", (lambda i=i: dcgm_page(i, gpus))),
        ):
            sock = socket.create_server(("127.0.0.1", 0))
            await asyncio.start_server(lambda r, w, page=page: answer(page, r, w), sock=sock)
            ports[kind].append(sock.getsockname()[1])
    print(json.dumps(ports), flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), int(sys.argv[2])))
