"""`sgwatch wait HOST` when the server is gone and its log ends serving, without a crash
(killed while serving, or stopped): not READY but over, exit 4 with where its log ends."""

from __future__ import annotations

from pathlib import Path

from sgwatch.cli import exitcodes
from sgwatch.cli.wait_events import PLACES_ENV
from tests.integration.headless import sgwatch
from tests.integration.test_wait_gone import env_for, write
from tests.unit.test_writer_gone import SERVING


def test_a_gone_server_whose_log_ends_serving_is_no_server_exit_4(host, tmp_path):
    env = env_for(host, tmp_path)
    log = Path(env[PLACES_ENV]) / "sglang.log"
    write(log, SERVING, 120)
    r = sgwatch(env, "wait", "gpu129", "--timeout", "60")
    assert r.returncode == exitcodes.NO_SERVER, r.stdout + r.stderr
    out = r.stdout + r.stderr
    assert f"following the log of one that is gone, {log}" in out
    assert "server gone; its log ends serving at 08:03:12, no crash" in out
    assert "READY" not in out
