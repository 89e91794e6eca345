"""`sgwatch fleet NAME --wait serving` during a rollout: a target Prometheus has found but
not yet scraped has no series, so no query lists it. The wait must not call the fleet
up without it. The real Prometheus holds one such target: its pool scrapes daily, at an
offset hashed from its labels, so it stays unscraped through the test."""

from __future__ import annotations

import os

from sgwatch.cli import exitcodes
from tests.integration.headless import sgwatch
from tests.sim.simproc import HOST, free_port


def test_a_target_found_but_not_yet_scraped_is_waited_for(prometheus, servers, tmp_path):
    job = f"rollout-{tmp_path.name}"
    up = servers.all[0].port
    prometheus.targets(job, [up])
    prometheus.scraped(job, 1)
    new = free_port()
    prometheus.targets(job, [new], pool="daily")  # the same job, from another pool
    assert prometheus.found(f"{HOST}:{new}")["health"] == "unknown"
    config = tmp_path / "config.toml"
    config.write_text(f'[fleets.lab]\nprometheus = "{prometheus.url}"\nmatch = [\'job="{job}"\']\n')
    env = {**os.environ, "HOME": str(tmp_path / "home")}

    r = sgwatch(env, "fleet", "lab", "--wait", "serving", "--timeout", "4", "--config", str(config))

    assert r.returncode == exitcodes.TIMED_OUT, (r.stdout, r.stderr)
    assert f"{HOST}:{new}: new, not yet scraped" in r.stdout.splitlines()  # told once
    assert r.stdout.count("not yet scraped") == 1
    assert "are up" not in r.stdout
    told = f"timed out after 4 s: 1 of 2 not up: {HOST}:{new} (not yet scraped)\n"
    assert r.stderr == told, r.stderr

    # Out of the fleet (another job), it no longer holds the wait up.
    prometheus.targets(job, [], pool="daily")
    prometheus.targets(f"{job}-other", [new], pool="daily")
    prometheus.found(f"{HOST}:{new}")
    r = sgwatch(
        env, "fleet", "lab", "--wait", "serving", "--timeout", "30", "--config", str(config)
    )
    assert r.returncode == exitcodes.OK, (r.stdout, r.stderr)
    assert r.stdout.splitlines()[-1] == "all 1 servers of lab are up"
