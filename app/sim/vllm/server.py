"""The simulated `vllm serve` process: start-up, HTTP, the 10 s stats lines, signals.

It is the API server; its children are titled like vLLM's (`VLLM::EngineCore`,
`VLLM::Worker_TPn` when tp > 1, common/proctree.py) and die with it, and the log's
process tags carry their pids.

Runs the machinery both simulated engines share (common/: clock, continuous-batching
scheduler, HTTP server, OpenAI endpoints, GPU state) and speaks vLLM over it:
- the port is bound at start-up, as vLLM binds it (a taken port fails at once;
  connections made during the warmup wait), but requests are answered only
  once the engine is up: uvicorn's `Application startup complete.` (vLLM's
  ready line), then `/health` 200;
- every 10 simulated seconds the API server logs `Engine 000: Avg prompt
  throughput ...` while there is traffic, or was in the last interval; when idle
  the line goes to DEBUG and disappears from the log (VLLM_LOGGING_LEVEL=DEBUG
  shows it), as in vLLM; with
  speculative decoding a `SpecDecoding metrics` line follows;
- `/metrics` is always on, with vLLM's `vllm:` names;
- SIGTERM or SIGINT: `Shutting down FastAPI HTTP server.`, uvicorn's shutdown
  lines, in-flight requests aborted (vLLM's --shutdown-timeout 0), exit 0;
  before the HTTP server is up the signal's default action ends it, SIGTERM after
  the traceback vLLM's start-up handler prints (`KeyboardInterrupt: terminated`,
  what a pod killed by its probe shows);
- a failed start (CUDA out of memory at capture, no room for the KV cache)
  exits 1 after the API server's traceback.
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import socket
from collections.abc import Callable

from sgwatch.sim.common.gpustate import Publisher
from sgwatch.sim.common.http import HttpServer
from sgwatch.sim.common.process import SimProcess
from sgwatch.sim.common.writer import DEBUG, INFO
from sgwatch.sim.vllm.api import VllmApi
from sgwatch.sim.vllm.args import VllmArgs
from sgwatch.sim.vllm.log import VllmWriter
from sgwatch.sim.vllm.metrics import VllmMetrics
from sgwatch.sim.vllm.scheduler import VllmScheduler
from sgwatch.sim.vllm.startup import VllmStartup

STATS_INTERVAL_S = 10.0  # VLLM_LOG_STATS_INTERVAL
_SITE = "/usr/local/lib/python3.12/dist-packages/vllm"
# The API server's traceback when its port is taken (setup_server binds it first).
BIND_FRAMES = [
    "Traceback (most recent call last):",
    '  File "/usr/local/bin/vllm", line 10, in <module>',
    "    sys.exit(main())",
    f'  File "{_SITE}/entrypoints/cli/main.py", line 54, in main',
    "    args.dispatch_function(args)",
    f'  File "{_SITE}/entrypoints/cli/serve.py", line 57, in cmd',
    "    uvloop.run(run_server(args))",
    f'  File "{_SITE}/entrypoints/openai/api_server.py", line 1883, in run_server',
    "    listen_address, sock = setup_server(args)",
    f'  File "{_SITE}/entrypoints/openai/api_server.py", line 1854, in setup_server',
    "    sock = create_server_socket(sock_addr)",
    f'  File "{_SITE}/entrypoints/openai/api_server.py", line 1809, in create_server_socket',
    "    sock.bind(addr)",
]

# Where SIGTERM finds the API server while the engine starts (run_server's handler).
TERM_FRAMES = [
    *BIND_FRAMES[:7],
    f'  File "{_SITE}/entrypoints/openai/api_server.py", line 1884, in run_server',
    "    await run_server_worker(listen_address, sock, args, **uvicorn_kwargs)",
    f'  File "{_SITE}/entrypoints/openai/api_server.py", line 1870, in signal_handler',
    '    raise KeyboardInterrupt("terminated")',
]


class VllmServer(SimProcess):
    def __init__(self, args: VllmArgs) -> None:
        names = (
            ["VLLM::EngineCore"]
            if args.tp == 1
            else [f"VLLM::Worker_TP{r}" for r in range(args.tp)]
        )
        super().__init__(args.run.sim.speed, Publisher(list(range(args.tp)), names))
        self.args = args
        self.out = VllmWriter(self.clock, args.tp)

    def _signal_handlers(self) -> dict[int, Callable[[], None]]:
        return {
            sig: functools.partial(self._on_signal, sig) for sig in (signal.SIGTERM, signal.SIGINT)
        }

    async def _serve(self) -> int:
        a, out = self.args, self.out
        startup = VllmStartup(a, out, self.gpus, self.clock, self.spec)
        await startup.banner()
        try:  # vLLM binds its port before the engine starts: a taken port fails at once
            sock = _listen(a.run.host, a.run.port)
        except OSError as e:
            out.tagged(out.api_tag(), [*BIND_FRAMES, f"OSError: [Errno {e.errno}] {e.strerror}"])
            return 1
        task = self._spawn(startup.run())
        await asyncio.wait({task, self._done}, return_when=asyncio.FIRST_COMPLETED)
        if self._done.done():
            return self._done.result()
        if not task.result():
            return 1
        metrics = VllmMetrics(a.run.served_model_name, spec_tokens=a.num_spec_tokens)
        scheduler = VllmScheduler(a, self.clock, self.gpus, startup.kv_tokens, metrics)
        self._spawn(scheduler.run())
        api = VllmApi(a, scheduler, metrics, self.status)
        self._http = HttpServer(api.handle, out.access)
        await self._http.start(a.run.host, a.run.port, sock=sock)
        out.uvicorn(f"Started server process [{self.pid}]")
        out.uvicorn("Waiting for application startup.")
        out.uvicorn("Application startup complete.")
        self.status.ready = True
        if a.log_stats:
            self._spawn(self._stats(metrics))
        return await self._done

    async def _stats(self, m: VllmMetrics) -> None:
        """vLLM's LoggingStatLogger: a line per interval, at INFO while anything happened
        in it or in the one before, else at DEBUG (shown with VLLM_LOGGING_LEVEL=DEBUG)."""
        out, k = self.out, self.args.num_spec_tokens
        last = (m.prompt_tokens, m.generation_tokens, m.drafts, m.draft_tokens, m.accepted)
        last_pos = list(m.accepted_per_pos)
        was_busy = False
        while True:
            await self.clock.sleep(STATS_INTERVAL_S)
            now = (m.prompt_tokens, m.generation_tokens, m.drafts, m.draft_tokens, m.accepted)
            prompt, gen, drafts, drafted, accepted = (b - a for a, b in zip(last, now, strict=True))
            busy = bool(prompt or gen)
            level = INFO if busy or was_busy else DEBUG
            hit = 100.0 * m.prefix_hits / m.prefix_queries if m.prefix_queries else 0.0
            out.api(
                "loggers.py:127",
                f"Engine 000: Avg prompt throughput: {prompt / STATS_INTERVAL_S:.1f} tokens/s, "
                f"Avg generation throughput: {gen / STATS_INTERVAL_S:.1f} tokens/s, "
                f"Running: {m.running} reqs, Waiting: {m.queued} reqs, "
                f"GPU KV cache usage: {100 * m.token_usage:.1f}%, "
                f"Prefix cache hit rate: {hit:.1f}%",
                level,
            )
            if k and drafts:
                per_pos = [
                    (b - a) / drafts for a, b in zip(last_pos, m.accepted_per_pos, strict=True)
                ]
                out.api(
                    "metrics.py:96",
                    "SpecDecoding metrics: "
                    f"Mean acceptance length: {1 + accepted / drafts:.2f}, "
                    f"Accepted throughput: {accepted / STATS_INTERVAL_S:.2f} tokens/s, "
                    f"Drafted throughput: {drafted / STATS_INTERVAL_S:.2f} tokens/s, "
                    f"Accepted: {accepted} tokens, Drafted: {drafted} tokens, "
                    f"Per-position acceptance rate: {', '.join(f'{p:.3f}' for p in per_pos)}, "
                    f"Avg Draft acceptance rate: {100 * accepted / drafted:.1f}%",
                    level,
                )
            was_busy = busy
            last, last_pos = now, list(m.accepted_per_pos)

    # -- signals ------------------------------------------------------------------

    def _on_signal(self, sig: int) -> None:
        if self._http is None:  # still starting: the signal's default action
            if sig == signal.SIGTERM:  # vLLM's start-up handler raises, and its traceback ends so
                out = self.out
                out.tagged(out.api_tag(), [*TERM_FRAMES, "KeyboardInterrupt: terminated"])
            self.gpus.remove()
            asyncio.get_running_loop().remove_signal_handler(sig)
            os.kill(self.pid, sig)
            return
        if not self.status.draining:
            self.status.draining = True
            self._spawn(self._shutdown())

    async def _shutdown(self) -> None:
        out = self.out
        out.api("launcher.py:99", "Shutting down FastAPI HTTP server.")
        out.uvicorn("Shutting down")
        if self._http is not None:
            await self._http.close()
        out.uvicorn("Waiting for application shutdown.")
        out.uvicorn("Application shutdown complete.")
        self._finish(0)


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def serve(args: VllmArgs) -> int:
    return VllmServer(args).main()
