"""A real Prometheus on loopback over simulated servers, for the fleet tests and bench.

    prom = Prometheus.start(folder)         # Debian's `prometheus`, 1 s scrapes
    prom.targets("t1", [port, ...])         # a job of scrape targets (file discovery)
    sim = start_sim("vllm", folder, env)    # a simulated server with /metrics on, here
    pid = await launch_on(transport, folder, log, port, "50", *SGLANG_ARGS)  # on an SSH host

Targets come from files Prometheus watches (file_sd), one per job, so a session's
one Prometheus serves every test, each under a job of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.integration.detached import detached
from tests.sim.simproc import HOST, Sim, free_port

SCRAPE_S = 1  # Prometheus's scrape interval here (1 s: tests see changes fast)
SLOW_S = 8  # the `slow` targets' interval: room for a restart between two scrapes
# The `daily` targets: a target's first scrape comes at an offset hashed from its labels
# within its interval, so one found now is almost surely not scraped within a test.
POOLS = {"fleet": "sd", "slow": "sd-slow", "daily": "sd-daily"}
MODELS = {"sglang": "Qwen/Qwen3-8B", "vllm": "meta-llama/Llama-3.1-8B-Instruct"}


def prometheus_binary() -> str | None:
    return shutil.which("prometheus") or next(
        (p for p in ("/usr/bin/prometheus",) if os.access(p, os.X_OK)), None
    )


@dataclass
class Prometheus:
    proc: subprocess.Popen
    port: int
    folder: Path

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @classmethod
    def start(cls, folder: Path, binary: str, scrape_s: float = SCRAPE_S) -> Prometheus:
        for sd in POOLS.values():
            (folder / sd).mkdir(parents=True)
        config = folder / "prometheus.yml"
        config.write_text(
            "global:\n"
            f"  scrape_interval: {scrape_s:g}s\n"
            f"  scrape_timeout: {scrape_s * 900:g}ms\n"
            "  evaluation_interval: 1m\n"
            "scrape_configs:\n"
            "  - job_name: fleet\n"
            "    file_sd_configs:\n"
            f"      - files: ['{folder / 'sd'}/*.json']\n"
            "        refresh_interval: 1s\n"
            "  - job_name: slow\n"
            f"    scrape_interval: {SLOW_S}s\n"
            "    file_sd_configs:\n"
            f"      - files: ['{folder / 'sd-slow'}/*.json']\n"
            "        refresh_interval: 1s\n"
            "  - job_name: daily\n"
            "    scrape_interval: 1d\n"
            "    file_sd_configs:\n"
            f"      - files: ['{folder / 'sd-daily'}/*.json']\n"
            "        refresh_interval: 1s\n"
        )
        port = free_port()
        log = open(folder / "prometheus.log", "wb")  # noqa: SIM115 - lives with the process
        proc = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={folder / 'data'}",
                f"--web.listen-address={HOST}:{port}",
                "--log.level=warn",
            ],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            process_group=0,
        )
        prom = cls(proc, port, folder)
        prom._wait_ready()
        return prom

    def _wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = (self.folder / "prometheus.log").read_text(errors="replace")
                raise AssertionError(f"prometheus exited {self.proc.returncode}:\n{log[-2000:]}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as r,
            ):
                if r.status == 200:
                    return
            time.sleep(0.1)
        raise AssertionError(f"prometheus not ready within {timeout} s")

    def targets(self, job: str, ports: list[int], pool: str = "fleet") -> None:
        """Scrape 127.0.0.1:PORT for each port as job `job`, every SCRAPE_S (every SLOW_S
        in the `slow` pool, daily in the `daily` one)."""
        self.target_groups(job, [{"targets": [f"{HOST}:{p}" for p in ports]}], pool)

    def target_groups(self, job: str, groups: list[dict], pool: str = "fleet") -> None:
        """file_sd target groups, of job `job` unless their labels say (one file per `job`
        and pool)."""
        doc = [{**g, "labels": {"job": job, **g.get("labels", {})}} for g in groups]
        path = self.folder / POOLS[pool] / f"{job}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, path)

    def scraped(self, job: str, count: int, timeout: float = 30.0) -> None:
        """Wait until every one of the job's `count` targets has been scraped once: until
        then a target has no `up` series, and the fleet does not list it."""
        deadline = time.monotonic() + timeout
        while len(seen := self.query(f'up{{job="{job}"}}')) < count:
            assert time.monotonic() < deadline, f"{len(seen)} of {count} scraped in {timeout} s"
            time.sleep(0.2)

    def found(self, instance: str, timeout: float = 30.0) -> dict:
        """Wait until Prometheus lists the target `instance`; its entry (health etc.)."""
        deadline = time.monotonic() + timeout
        while True:
            with urllib.request.urlopen(f"{self.url}/api/v1/targets", timeout=5) as r:
                active = json.load(r)["data"]["activeTargets"]
            if found := [t for t in active if t["labels"].get("instance") == instance]:
                return found[0]
            assert time.monotonic() < deadline, f"{instance} not found in {timeout} s"
            time.sleep(0.2)

    def query(self, promql: str) -> list[dict]:
        q = urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{q}", timeout=5) as r:
            return json.load(r)["data"]["result"]

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)


def start_sim(engine: str, folder: Path, env: dict[str, str], *extra: str) -> Sim:
    """A simulated SGLang (with --enable-metrics) or vLLM server, fast and quiet."""
    fast = ["--sim-speed", "300", "--sim-seed", "7", *extra]
    if engine == "vllm":
        return Sim(["vllm", "serve", MODELS["vllm"], *fast], folder, env)
    return Sim(["--model-path", MODELS["sglang"], "--enable-metrics", *fast], folder, env)


def wait_metrics(sim: Sim, timeout: float = 60.0) -> None:
    """Until the server answers /metrics (after its warmup)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sim.proc.poll() is not None:
            raise AssertionError(f"simulator exited {sim.proc.returncode}: {sim.log()[-800:]!r}")
        with contextlib.suppress(OSError):
            if sim.request("GET", "/metrics")[0] == 200:
                return
        time.sleep(0.1)
    raise AssertionError(f"no /metrics on port {sim.port} within {timeout} s")


def start_dcgm(env: dict[str, str], hostname: str, folder: Path) -> tuple[subprocess.Popen, int]:
    """The simulated dcgm-exporter on a free port; (process, port)."""
    log = open(folder / "dcgm.log", "wb")  # noqa: SIM115 - lives with the process
    proc = subprocess.Popen(
        [sys.executable, "-m", "sgwatch.sim.common.dcgm", "--port", "0", "--hostname", hostname],
        stdout=subprocess.PIPE,
        stderr=log,
        stdin=subprocess.DEVNULL,
        env=env,
        process_group=0,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if not line.startswith("listening on "):
        raise AssertionError(f"dcgm stand-in did not start: {line!r}")
    return proc, int(line.rsplit(":", 1)[1])


def sim_argv(port: int, speed: str, *args: str) -> list[str]:
    """A simulated server's command line on `port`, /metrics on (SGLang asks for it)."""
    metrics = [] if args[:1] == ("vllm",) else ["--enable-metrics"]
    where = ["--host", HOST, "--port", str(port), "--sim-speed", speed, "--sim-seed", "7"]
    return [sys.executable, "-m", "sgwatch.sim", *args, *metrics, *where]


async def launch_on(
    transport, folder: Path, log: Path, port: int, speed: str, *args: str, state: Path
) -> int:
    """A simulated server started detached over `transport` (an unconnected SSH
    transport to the test host) as a user would; its pid, as the host numbers it.
    `state`: the simulated GPUs' folder the host's nvidia-smi stand-in reads."""
    return await run_detached(transport, folder, log, sim_argv(port, speed, *args), state)


async def run_detached(transport, folder: Path, log: Path, argv: list[str], state: Path) -> int:
    """`argv` started detached over `transport`, with the simulated GPUs of `state`."""
    await transport.connect()
    try:
        script = detached(argv, str(folder), str(log), {"SGWATCH_SIM_STATE": str(state)})
        r = await transport.run(script, timeout=10)
    finally:
        await transport.close()
    return int(r.stdout)
