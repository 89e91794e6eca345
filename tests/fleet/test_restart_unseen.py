"""A server restarted between two scrapes, so that Prometheus never saw it down: the
fleet still says it restarted, and follows it over SSH for the warmup it missed.

The simulated SGLang server (whose /metrics, like SGLang's, has no process start
time) runs on the test sshd's host, scraped every SLOW_S seconds; it is killed and
started again on its port right after a scrape, warming up in a second or two."""

from __future__ import annotations

import http.client
import json
import signal
import time

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

    def value(promql: str) -> float | None:
        result = prometheus.query(promql)
        return float(result[0]["value"][1]) if result else None

    def until(check, what: str, timeout: float = 40.0):
        deadline = time.monotonic() + timeout
        while (got := check()) is None or got is False:
            assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
            time.sleep(0.1)
        return got

    first = launch("a.log")
    until(lambda: _answers(port), "the server up")
    generate(port)  # its token counter above zero, so that a restart sends it back
    prometheus.targets(job, [port], slow=True)
    tokens = f'sglang:generation_tokens_total{{instance="{instance}"}}'
    until(lambda: (value(tokens) or 0) > 0, "the tokens scraped")
    scraped = f'timestamp(up{{instance="{instance}"}})'
    at = value(scraped)
    while True:  # a scrape just happened, and the next is far enough away
        at = until(lambda was=at: (v := value(scraped)) != was and v, "a scrape", 3 * SLOW_S)
        if at + SLOW_S - time.time() >= ROOM_S:
            break
    host.killpg(first, signal.SIGKILL)
    launch("b.log")
    until(lambda: _answers(port), "the server up again", ROOM_S)
    until(lambda: (value(f"{scraped} > {at}") or 0) > 0, "the next scrape", 2 * SLOW_S)
    seen_down = value(f'min_over_time(up{{instance="{instance}"}}[1m])')
    assert seen_down == 1, "Prometheus saw the restart (too slow a machine for SLOW_S)"

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


def _answers(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection(HOST, port, timeout=2)
        conn.request("GET", "/metrics")
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False
