"""End to end: `sgwatch fleet NAME --json`, polled as a script would, over a real
Prometheus scraping simulated servers on the test sshd's host. A server restarted
there goes warming (its phase read over SSH while Prometheus sees it down), then up;
one that crashes during its warmup shows its cause from its log."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from sgwatch.cli import exitcodes
from tests.fleet.rig import launch_on
from tests.integration.conftest import host, sims, ssh, sshd  # noqa: F401 (fixtures)
from tests.integration.headless import CRASH_KV, QWEN, cli_env, sgwatch
from tests.integration.helpers import arun
from tests.integration.sshd import free_port

UP = ("serving", "idle")


def launch(sims, log: Path, port: int, speed: str, *args: str) -> int:  # noqa: F811
    """A simulated server with /metrics on `port`, started detached on gpu129 as a user
    would; its pid (the host's), stopped with the others after the test."""
    made = launch_on(sims.ssh("gpu129"), sims.folder, log, port, speed, *args, state=sims.state)
    pid = arun(made)
    sims.pids.append(pid)
    return pid


def test_restarted_goes_warming_then_up_and_a_crash_shows_its_cause(
    prometheus,
    host,  # noqa: F811
    sims,  # noqa: F811
    tmp_path,
):
    job = f"follow-{tmp_path.name}"
    env = cli_env(host, tmp_path / "home")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[fleets.lab]\nprometheus = "{prometheus.url}"\nmatch = [\'job="{job}"\']\n'
        'refresh_s = 1\nhosts = { "127.0.0.1" = "gpu129" }\n'
    )
    restarted, crashing = free_port(), free_port()
    first = launch(sims, tmp_path / "a.log", restarted, "50", *QWEN)
    launch(sims, tmp_path / "c.log", crashing, "2", *CRASH_KV)
    prometheus.targets(job, [restarted, crashing])
    prometheus.scraped(job, 2)  # a target not yet scraped is in no answer: not in the fleet
    a, c = f"127.0.0.1:{restarted}", f"127.0.0.1:{crashing}"

    def look() -> dict[str, dict]:
        r = sgwatch(env, "fleet", "lab", "--json", "--config", str(config), timeout=60)
        assert r.returncode == 0, r.stderr
        return {s["instance"]: s for s in json.loads(r.stdout)["servers"]}

    went: list[tuple] = []

    def polled(check, timeout: float = 120) -> dict[str, dict]:
        deadline = time.monotonic() + timeout
        while True:
            rows = look()
            went.append(tuple((k, r["state"], r["detail"]) for k, r in sorted(rows.items())))
            if check(rows):
                return rows
            assert time.monotonic() < deadline, f"not reached; the rows went {went}"

    # A crash during the warmup, seen live by the follower (--wait follows all along).
    r = sgwatch(
        env, "fleet", "lab", "--wait", "serving", "--timeout", "120", "--config", str(config)
    )
    assert r.returncode == exitcodes.FAILED, (r.stdout, r.stderr)
    assert f"{c} crashed: KV cache: RuntimeError: Not enough memory. " in r.stderr
    assert f"{a}: idle" in r.stdout  # the other was up meanwhile
    prometheus.targets(job, [restarted])  # the crashed one is taken out of the fleet

    host.killpg(first, signal.SIGKILL)  # restarted, the slow way: minutes of warmup at 1x
    launch(sims, tmp_path / "a2.log", restarted, "1", *QWEN)
    rows = polled(lambda r: r.get(a, {}).get("state") == "warming")
    assert rows[a]["model"] == "Qwen/Qwen3-8B"
    rows = polled(lambda r: r[a]["state"] in UP, timeout=180)
    assert rows[a]["detail"] == ""  # Prometheus's row again
