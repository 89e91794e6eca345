"""A live fleet to try `sgwatch fleet` on: a real Prometheus over 20 simulated servers.

Everything on loopback, in a temporary folder removed at the end:
- the test sshd (tests/integration/sshd.py) as the SSH host `gpu129`, with the
  nvidia-smi stand-in; the servers run there, launched detached as a user would;
- 10 simulated SGLang servers (`--enable-metrics`) and 10 vLLM ones, two models each,
  most of them under a steady trickle of streamed requests;
- the simulated dcgm-exporter over their GPUs, on the host too;
- Debian's `prometheus` scraping them (jobs `sglang`, `vllm`, `gpu`; tests/fleet/rig.py);
- a config with `[fleets.lab]`, every instance mapped to `gpu129`.

Then, on a schedule: one SGLang server is restarted every --restart-every seconds
(its warmup at real speed: about a minute of weights, KV cache and CUDA graphs, seen
over SSH while Prometheus sees it down); another is restarted every --unseen-every
seconds right after a scrape, up again before the next, so that Prometheus never sees
it down; and one vLLM server runs out of memory in its CUDA graph capture, launched
again --crash-every seconds after each crash, as a service manager would. It prints
the command to run in another pane and what it does, until Ctrl-C.

    python bench/fleet_live.py [--scrape 5] [--restart-every 180] [--crash-every 120]
                               [--unseen-every 240]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import shlex
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sgwatch.sim.common.nvidia_smi import install
from sgwatch.transport.ssh import SshTransport
from tests.fleet.rig import Prometheus, launch_on, prometheus_binary, run_detached
from tests.integration.headless import cli_env
from tests.integration.sshd import SshdServer, free_port

ROOT = Path(__file__).resolve().parents[1]
HOST = "gpu129"
MODELS = {
    "sglang": ("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct"),
    "vllm": ("Qwen/Qwen3-8B", "mistralai/Mistral-7B-Instruct-v0.3"),
}
QUICK = "10"  # the first start of each server: up within seconds
FULL = "1"  # a restart or a crashing start: the warmup at real speed
FASTEST = "300"  # a restart between two scrapes: up again in a second or two
TOK_S = {QUICK: "4", FULL: "40", FASTEST: "0.13"}  # a request's decode rate, ~40 tok/s real
IDLE_EVERY = 4  # every 4th server gets no requests
CRASHING = ("vllm", "serve", "Qwen/Qwen3-8B", "--gpu-memory-utilization", "0.99")


class Server:
    def __init__(self, engine: str, model: str, folder: Path) -> None:
        self.engine, self.model = engine, model
        self.port = free_port()
        self.log = folder / f"{engine}-{self.port}.log"
        self.pid: int | None = None

    @property
    def instance(self) -> str:
        return f"127.0.0.1:{self.port}"

    def args(self, speed: str) -> tuple[str, ...]:
        pace = ("--sim-tok-s", TOK_S[speed])
        if self.engine == "vllm":
            return ("vllm", "serve", self.model, *pace)
        return ("--model-path", self.model, "--cuda-graph-max-bs", "32", *pace)


class Live:
    """The host, Prometheus, the GPU exporter and the servers; close() ends whatever
    open() got to start."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.srv: SshdServer | None = None
        self.prom: Prometheus | None = None
        self.state = tmp / "gpu-state"
        self.runs = tmp / "runs"
        self.servers = [
            Server(engine, MODELS[engine][i % 2], self.runs)
            for engine in ("sglang", "vllm")
            for i in range(10)
        ]
        self.restarting = self.servers[0]  # an SGLang server
        self.unseen = self.servers[1]  # another, restarted between two scrapes
        self.crashing = self.servers[-1]  # a vLLM server
        self.stop = threading.Event()

    def open(self, scrape_s: float) -> None:
        binary = prometheus_binary()
        if binary is None:
            raise SystemExit("prometheus is not installed (apt-get install prometheus)")
        self.srv = SshdServer(self.tmp / "sshd").start()
        install(self.srv.gpu_bin, self.state)
        self.runs.mkdir()
        self.prom = Prometheus.start(self.tmp / "prometheus", binary, scrape_s=scrape_s)
        # on the host, as dcgm-exporter runs on its node: the GPUs' files name its pids
        dcgm_port = free_port()
        argv = [sys.executable, "-m", "sgwatch.sim.common.dcgm", "--port", str(dcgm_port)]
        self.ssh_run(self.tmp / "dcgm.log", [*argv, "--hostname", HOST])
        self.prom.targets("gpu", [dcgm_port])
        self.start_all()

    def transport(self) -> SshTransport:
        assert self.srv is not None
        return SshTransport(HOST, config=[str(self.srv.ssh_config)])

    def launch(self, s: Server, speed: str, args: tuple[str, ...] | None = None) -> None:
        launched = launch_on(
            self.transport(), self.runs, s.log, s.port, speed, *(args or s.args(speed)),
            state=self.state,
        )  # fmt: skip
        s.pid = asyncio.run(launched)

    def ssh_run(self, log: Path, argv: list[str]) -> int:
        return asyncio.run(run_detached(self.transport(), self.runs, log, argv, self.state))

    def kill(self, s: Server) -> None:
        if s.pid is not None and self.srv is not None:
            with contextlib.suppress(OSError):
                self.srv.killpg(s.pid, signal.SIGKILL)

    def start_all(self) -> None:
        for s in self.servers:
            if s is self.crashing:
                self.launch(s, FULL, CRASHING)
            else:
                self.launch(s, QUICK)
        assert self.prom is not None
        for engine in ("sglang", "vllm"):
            self.prom.targets(engine, [s.port for s in self.servers if s.engine == engine])
        for i, s in enumerate(self.servers):
            if i % IDLE_EVERY != IDLE_EVERY - 1 and s is not self.crashing:
                threading.Thread(target=self.traffic, args=(s,), daemon=True).start()

    def traffic(self, s: Server) -> None:
        """Streamed requests one after another while the server answers."""
        path = "/v1/completions" if s.engine == "vllm" else "/generate"
        while not self.stop.is_set():
            body: dict = {"stream": True}
            if s.engine == "vllm":
                body |= {"model": s.model, "prompt": "Count to ten.", "max_tokens": 300}
            else:
                body |= {"text": "Count to ten.", "sampling_params": {"max_new_tokens": 300}}
            try:
                conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
                conn.request("POST", path, json.dumps(body))
                conn.getresponse().read()
                conn.close()
            except (OSError, http.client.HTTPException):  # not up yet, or restarted
                self.stop.wait(2.0)

    def config(self, home: Path) -> Path:
        assert self.prom is not None
        path = home / ".config" / "sgwatch" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "[fleets.lab]\n"
            f'prometheus = "{self.prom.url}"\n'
            "match = ['job=~\"sglang|vllm\"']\n"
            "gpu_match = ['job=\"gpu\"']\n"
            f'hosts = {{ "127.0.0.1" = "{HOST}" }}\n'
        )
        return path

    def restart_between_scrapes(self, s: Server, scrape_s: float) -> bool:
        """`s` killed right after a scrape and up again before the next (it warms up in
        a second or two); whether Prometheus missed it, as it would a fast restart."""
        assert self.prom is not None
        prom = self.prom

        def value(promql: str) -> float | None:
            result = prom.query(promql)
            return float(result[0]["value"][1]) if result else None

        scraped = f'timestamp(up{{instance="{s.instance}"}})'
        last, deadline = value(scraped), time.monotonic() + 3 * scrape_s
        while value(scraped) == last and time.monotonic() < deadline:
            time.sleep(0.05)
        self.kill(s)
        self.launch(s, FASTEST)
        time.sleep(2 * scrape_s)
        return value(f'min_over_time(up{{instance="{s.instance}"}}[1m])') == 1

    def running(self, s: Server) -> bool:
        return s.pid is not None and self.srv is not None and self.srv.alive(s.pid)

    def close(self) -> None:
        self.stop.set()
        if self.srv is not None:
            with contextlib.suppress(Exception):
                self.srv.kill_remote_processes()
            self.srv.stop()
        if self.prom is not None:
            self.prom.stop()


def say(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {text}", flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scrape", type=float, default=5.0, help="Prometheus's scrape interval, s")
    p.add_argument("--restart-every", type=float, default=180.0, metavar="S")
    p.add_argument("--crash-every", type=float, default=120.0, metavar="S")
    p.add_argument("--unseen-every", type=float, default=240.0, metavar="S")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sgwatch-fleet-live-"))
    live = Live(tmp)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # cleaned up as for Ctrl-C
    try:
        live.open(args.scrape)
        assert live.srv is not None and live.prom is not None
        home = tmp / "home"
        env = cli_env(live.srv, home)
        env |= {"XDG_STATE_HOME": str(home / ".state"), "XDG_CACHE_HOME": str(home / ".cache")}
        config = live.config(home)
        keep = ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
        assigns = " ".join(f"{k}={shlex.quote(env[k])}" for k in keep)
        sgwatch = shlex.quote(str(ROOT / ".venv" / "bin" / "sgwatch"))
        print(
            f"Prometheus {live.prom.url}, 20 servers on {HOST} (10 SGLang, 10 vLLM), "
            f"files in {tmp}\n"
            f"restarting: {live.restarting.instance} every {args.restart_every:g} s; "
            f"crashing: {live.crashing.instance} (CUDA graph capture out of memory); "
            f"restarted between two scrapes: {live.unseen.instance} "
            f"every {args.unseen_every:g} s\n\n"
            "In another pane:\n\n"
            f"  env {assigns} {sgwatch} fleet lab --config {shlex.quote(str(config))}\n\n"
            "Ctrl-C here stops everything and removes the folder.",
            flush=True,
        )
        say(f"crashing server launched on {live.crashing.instance}")
        next_restart = time.monotonic() + args.restart_every
        next_unseen = time.monotonic() + args.unseen_every / 2
        crashed_at: float | None = None
        while True:
            time.sleep(1.0)
            now = time.monotonic()
            if now >= next_restart:
                live.kill(live.restarting)
                live.launch(live.restarting, FULL)
                say(f"restarted {live.restarting.instance} (pid {live.restarting.pid})")
                next_restart = now + args.restart_every
            if now >= next_unseen:
                missed = live.restart_between_scrapes(live.unseen, args.scrape)
                seen = "never seen down" if missed else "seen down all the same"
                say(f"restarted {live.unseen.instance} between two scrapes: {seen}")
                next_unseen = time.monotonic() + args.unseen_every
            if crashed_at is None and not live.running(live.crashing):
                crashed_at = now
                say(f"{live.crashing.instance} crashed; launched again in {args.crash_every:g} s")
            elif crashed_at is not None and now - crashed_at >= args.crash_every:
                live.launch(live.crashing, FULL, CRASHING)
                crashed_at = None
                say(f"crashing server launched again on {live.crashing.instance}")
    except KeyboardInterrupt:
        pass
    finally:
        live.close()
        shutil.rmtree(tmp, ignore_errors=True)
        print("stopped; removed", tmp, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
