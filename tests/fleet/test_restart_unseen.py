"""A server restarted between two scrapes, so that Prometheus never saw it down: the
fleet still says it restarted, and follows it over SSH for the warmup it missed.

The simulated SGLang server (whose /metrics, like SGLang's, has no process start
time: its token counter going back tells) runs on the test sshd's host, scraped every
SLOW_S seconds; it is killed and started again on its port right after a scrape,
warming up in a second or two. A target that serves its process start time, as vLLM
does, says when exactly."""

from __future__ import annotations

import asyncio
import http.client
import json
import signal
import subprocess
import sys
import time

import psutil

from sgwatch.config import Fleet
from sgwatch.fleet.prometheus import PrometheusSource
from tests.fleet.rig import SLOW_S, launch_on
from tests.integration.conftest import host, sims, ssh, sshd  # noqa: F401 (fixtures)
from tests.integration.headless import QWEN, cli_env, generate, sgwatch
from tests.integration.helpers import arun
from tests.integration.sshd import free_port
from tests.sim.simproc import HOST

ROOM_S = 5.5  # the restart starts with at least this long before the next scrape


def test_a_restart_between_scrapes_is_told_and_followed(
    prometheus,
    host,  # noqa: F811
    sims,  # noqa: F811
    tmp_path,
):
    job = f"unseen-{tmp_path.name}"
    port = free_port()
    instance = f"{HOST}:{port}"

    def launch(log: str) -> int:
        made = launch_on(
            sims.ssh("gpu129"), sims.folder, tmp_path / log, port, "300", *QWEN, state=sims.state
        )
        sims.pids.append(arun(made))
        return sims.pids[-1]

    first = launch("a.log")
    until(lambda: _answers(port), "the server up")
    generate(port)  # its token counter above zero, so that a restart sends it back
    prometheus.targets(job, [port], pool="slow")
    tokens = f'sglang:generation_tokens_total{{instance="{instance}"}}'
    until(lambda: (value(prometheus, tokens) or 0) > 0, "the tokens scraped")

    def restart() -> None:
        host.killpg(first, signal.SIGKILL)
        launch("b.log")
        until(lambda: _answers(port), "the server up again", ROOM_S)

    between_scrapes(prometheus, instance, restart)

    env = cli_env(host, tmp_path / "home")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[fleets.lab]\nprometheus = "{prometheus.url}"\nmatch = [\'job="{job}"\']\n'
        f'hosts = {{ "{HOST}" = "gpu129" }}\n'
    )
    r = sgwatch(env, "fleet", "lab", "--json", "--config", str(config), timeout=60)
    assert r.returncode == 0, r.stderr
    [row] = json.loads(r.stdout)["servers"]
    assert row["state"] in ("serving", "idle"), row
    assert row["restarted_at"] is not None
    # a first look cannot say when within the window; its log says how long it took
    assert row["detail"].startswith("restarted in the last 5m; ready in "), row["detail"]


# What vLLM's /metrics serves besides its own series (its default registry): the
# process collector's start time. A real prometheus_client exporter stands in for it.
EXPORTER = """
import sys, time
from prometheus_client import Counter, start_http_server
tokens = Counter("vllm:generation_tokens", "Generation tokens.", ["model_name"])
tokens.labels("m").inc(7)
start_http_server(int(sys.argv[1]), addr="127.0.0.1")
print("up", flush=True)
time.sleep(3600)
"""


async def test_a_restart_with_a_process_start_time_says_when(prometheus, tmp_path):
    job = f"started-{tmp_path.name}"
    port = free_port()
    instance = f"{HOST}:{port}"

    def start() -> subprocess.Popen:
        proc = subprocess.Popen(
            [sys.executable, "-c", EXPORTER, str(port)], stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None and proc.stdout.readline() == "up\n"
        return proc

    procs = [start()]

    def restart() -> None:
        procs[-1].kill()
        procs[-1].wait()
        procs.append(start())

    src = PrometheusSource.open(job, Fleet(prometheus=prometheus.url, match=[f'job="{job}"']))
    try:
        prometheus.targets(job, [port], pool="slow")
        started = f'process_start_time_seconds{{instance="{instance}"}}'
        await asyncio.to_thread(until, lambda: value(prometheus, started), "the start scraped")
        before = await src.snapshot()
        await asyncio.to_thread(between_scrapes, prometheus, instance, restart)
        after = await src.snapshot()
        born = psutil.Process(procs[-1].pid).create_time()
    finally:
        await src.close()
        for proc in procs:
            proc.kill()
            proc.wait()
    assert [(r.state, r.restarted_at) for r in before.rows] == [("idle", None)]
    [row] = after.rows
    assert row.state == "idle" and row.restarted_at is not None
    assert abs(row.restarted_at - born) < 1  # when the new process started
    when = time.strftime("%H:%M:%S", time.localtime(row.restarted_at))
    assert row.detail == f"restarted {when}"


def _answers(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection(HOST, port, timeout=2)
        conn.request("GET", "/metrics")
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False


def value(prometheus, promql: str) -> float | None:
    result = prometheus.query(promql)
    return float(result[0]["value"][1]) if result else None


def until(check, what: str, timeout: float = 40.0):
    deadline = time.monotonic() + timeout
    while (got := check()) is None or got is False:
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.1)
    return got


def between_scrapes(prometheus, instance: str, restart) -> None:
    """`restart()` right after a scrape of `instance`, with ROOM_S before the next;
    then until the next, which must find it up (the test's premise)."""
    scraped = f'timestamp(up{{instance="{instance}"}})'
    at = value(prometheus, scraped)
    while True:
        at = until(
            lambda was=at: (v := value(prometheus, scraped)) != was and v, "a scrape", 3 * SLOW_S
        )
        if at + SLOW_S - time.time() >= ROOM_S:
            break
    restart()
    until(lambda: (value(prometheus, f"{scraped} > {at}") or 0) > 0, "the next scrape", 2 * SLOW_S)
    seen_down = value(prometheus, f'min_over_time(up{{instance="{instance}"}}[1m])')
    assert seen_down == 1, "Prometheus saw the restart (too slow a machine for SLOW_S)"
