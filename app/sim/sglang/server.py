"""The simulated server process: startup, HTTP, warmup request, signals, exit.

One process, one asyncio loop; its only children are SGLang's titled scheduler and
detokenizer processes (processes.py), which the kernel kills with it, so a SIGKILL of
the server or its process group leaves nothing behind. The ways out mirror SGLang's:
- a bad flag combination: a traceback before any server_args line, exit 1;
- a scheduler failure (out of memory): "Received sigquit from a child
  process...", then the process SIGKILLs itself (status 137), as SGLang's
  kill_process_tree does;
- SIGTERM once serving: drain every in-flight request, with no time limit,
  then uvicorn's shutdown lines and exit 0. SGLang installs that handler on the
  first generate request (normally its own warmup); before it, SIGTERM's
  default action kills the process;
- SIGINT: uvicorn's shutdown, without draining.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Callable

from sgwatch.sim.common.gpustate import Publisher
from sgwatch.sim.common.http import HttpServer
from sgwatch.sim.common.process import SimProcess
from sgwatch.sim.common.scheduler import Scheduler
from sgwatch.sim.common.writer import ERROR
from sgwatch.sim.sglang import crashes, processes, timeline
from sgwatch.sim.sglang.api import SglangApi
from sgwatch.sim.sglang.args import ServerArgs
from sgwatch.sim.sglang.logfmt import for_version
from sgwatch.sim.sglang.metrics_page import SglangMetrics
from sgwatch.sim.sglang.startup import Startup
from sgwatch.sim.sglang.writer import BatchLog, SglangWriter

WATCHDOG_S = 5.0  # how often the draining server reports what is left
WARMUP_PROMPT = "The capital city of France is"
READY = "The server is fired up and ready to roll!"


class SimServer(SimProcess):
    def __init__(self, args: ServerArgs) -> None:
        gpus = Publisher(
            [args.base_gpu_id + r for r in range(args.tp)], processes.schedulers(args.tp)
        )
        super().__init__(args.sim.speed, gpus)
        self.args = args
        self.fmt = for_version(args.format)
        self.out = SglangWriter(self.clock, args.tp, args.log_level)
        self._sigterm_armed = False  # SGLang's handler exists from the first generate call
        self._scheduler: Scheduler | None = None

    def _signal_handlers(self) -> dict[int, Callable[[], None]]:
        return {signal.SIGTERM: self._on_sigterm, signal.SIGINT: self._on_sigint}

    async def _serve(self) -> int:
        a, out = self.args, self.out
        if a.invalid:
            out.raw(crashes.invalid_args(a.invalid))
            out.log(crashes.kill_process_tree(self.pid, False))
            return 1
        processes.spawn(a.tp)  # once its arguments pass, as SGLang starts its processes
        plan = timeline.build(a, self.spec)
        starting = Startup(a, plan, self.fmt, out, self.gpus, self.clock, self.spec)
        startup = self._spawn(starting.run())
        await asyncio.wait({startup, self._done}, return_when=asyncio.FIRST_COMPLETED)
        if self._done.done():
            return self._done.result()
        if not startup.result():
            self.gpus.remove()
            os.kill(self.pid, signal.SIGKILL)  # kill_process_tree takes the parent too
        metrics = SglangMetrics(a.served_model_name, startup_time=starting.startup_time)
        lines = BatchLog(self.fmt, out)
        self._scheduler = Scheduler(a, lines, self.clock, self.gpus, plan.kv.tokens, metrics)
        self._spawn(self._scheduler.run())
        api = SglangApi(a, self.fmt, out, self._scheduler, metrics, self.status, self._arm_sigterm)
        self._http = HttpServer(api.handle, out.access)
        out.uvicorn(f"Started server process [{self.pid}]")
        out.uvicorn("Waiting for application startup.")
        out.uvicorn("Application startup complete.")
        try:
            await self._http.start(a.host, a.port)
        except OSError as e:
            address = (a.host, a.port)
            reason = (e.strerror or str(e)).lower()
            out.uvicorn(
                f"[Errno {e.errno}] error while attempting to bind on address {address}: {reason}",
                ERROR,
            )
            return 1
        out.uvicorn(f"Uvicorn running on http://{a.host}:{a.port} (Press CTRL+C to quit)")
        self._spawn(self._warmup())
        return await self._done

    async def _warmup(self) -> None:
        if self.args.skip_warmup:
            self._ready()
            return
        await self.clock.sleep(1.0)
        await self._self_request("GET", self.fmt.warmup_info_path)
        body = {"text": WARMUP_PROMPT, "sampling_params": {"temperature": 0, "max_new_tokens": 8}}
        status = await self._self_request("POST", "/generate", body)
        if status == 200:
            self._ready()

    def _ready(self) -> None:
        self.status.ready = True
        self.out.log(READY)

    async def _self_request(self, method: str, path: str, body: dict | None = None) -> int:
        """What SGLang's warmup thread does: a real HTTP request to its own port."""
        host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(self.args.host)
        reader, writer = await asyncio.open_connection(host or self.args.host, self.args.port)
        data = json.dumps(body).encode() if body is not None else b""
        writer.write(
            f"{method} {path} HTTP/1.1\r\nhost: {self.args.host}:{self.args.port}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(data)}\r\n"
            "connection: close\r\n\r\n".encode()
            + data
        )
        await writer.drain()
        status_line = await reader.readline()
        await reader.read()
        writer.close()
        return int(status_line.split()[1])

    # -- signals --------------------------------------------------------------------

    def _arm_sigterm(self) -> None:
        self._sigterm_armed = True

    def _on_sigterm(self) -> None:
        if not self._sigterm_armed:
            self.gpus.remove()
            asyncio.get_running_loop().remove_signal_handler(signal.SIGTERM)
            os.kill(self.pid, signal.SIGTERM)  # the default action: die by the signal
            return
        if not self.status.draining:
            self.status.draining = True
            self._spawn(self._drain())

    def _on_sigint(self) -> None:
        if self._http is None:
            self._finish(130)
        elif not self.status.draining:
            self.status.draining = True
            self._spawn(self._shutdown())

    async def _drain(self) -> None:
        out, scheduler = self.out, self._scheduler
        out.log("SIGTERM received. signum=15 frame=None. Draining requests and shutting down...")
        while True:
            await self.clock.sleep(WATCHDOG_S)
            jobs = scheduler.active if scheduler is not None else []
            if not jobs and not (self._http and self._http.streaming):
                break
            if jobs:
                rids = [j.rid for j in jobs]
                out.log(
                    f"Gracefully exiting... Remaining number of requests {len(jobs)}. "
                    f"Remaining requests remaining_rids={rids}."
                )
        await self._shutdown()

    async def _shutdown(self) -> None:
        out = self.out
        out.uvicorn("Shutting down")
        if self._http is not None:
            await self._http.close()
        out.uvicorn("Waiting for application shutdown.")
        out.uvicorn("Application shutdown complete.")
        out.uvicorn(f"Finished server process [{self.pid}]")
        self._finish(0)


def serve(args: ServerArgs) -> int:
    return SimServer(args).main()
