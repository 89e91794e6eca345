"""`sgwatch wait HOST` after the server died, with no --log, no configured log and no
history: the logs of servers that are gone, found where people put them (host/recent.py).

SGWATCH_LOG_PLACES points the look at a folder of the test's own (the usual places,
the host's real home and /tmp, hold whatever else runs on this machine); a shell
started in a folder makes that folder a place too, as a user's shell does."""

from __future__ import annotations

import os
import time
from pathlib import Path

from sgwatch.cli import exitcodes
from sgwatch.cli.wait_events import PLACES_ENV
from tests.integration.detached import detached
from tests.integration.headless import CRASH_KV, cli_env, sgwatch
from tests.integration.helpers import arun, wait_until

SGLANG = b"[2026-01-10 08:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
LOADING = SGLANG + b"[2026-01-10 08:00:01 TP0] Load weight begin. avail mem=78.00 GB\n"


def env_for(host, tmp_path: Path) -> dict[str, str]:
    places = tmp_path / "places"
    places.mkdir()
    return {**cli_env(host, tmp_path / "home"), PLACES_ENV: str(places)}


def shell_in(sims, folder: Path) -> int:
    """A user's shell on the host whose working folder is `folder`; killed with the sims."""

    async def run() -> int:
        t = sims.ssh("gpu129")
        await t.connect()
        try:
            r = await t.run(
                detached(["sh", "-c", "sleep 300; :"], str(folder), "/dev/null"), timeout=10
            )
        finally:
            await t.close()
        return int(r.stdout)

    pid = arun(run())
    sims.pids.append(pid)
    return pid


def write(path: Path, data: bytes, age: float) -> None:
    path.write_bytes(data)
    os.utime(path, (time.time() - age, time.time() - age))


def test_a_server_that_crashed_before_wait_ran_is_reported_with_its_cause(host, sims, tmp_path):
    env = env_for(host, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    shell_in(sims, work)
    sims.launch(work / "sglang.log", *CRASH_KV)  # as `nohup ... > sglang.log &` from there
    server = sims.pids[-1]
    assert wait_until(lambda: not host.alive(server), timeout=60)
    r = sgwatch(env, "wait", "gpu129", "--timeout", "60")
    assert r.returncode == exitcodes.FAILED, r.stderr
    assert "CRASHED during allocating_kv_cache: RuntimeError: Not enough memory." in r.stderr
    assert f"following the log of one that is gone, {work / 'sglang.log'}" in r.stdout + r.stderr


def test_two_logs_of_gone_servers_are_listed_newest_first_exit_7(host, tmp_path):
    env = env_for(host, tmp_path)
    places = Path(env[PLACES_ENV])
    write(places / "older.log", SGLANG + b"[2026-01-10 08:00:02] Scheduler hit an exception\n", 900)
    (places / "runs").mkdir()
    write(places / "runs" / "newer.log", LOADING, 60)
    r = sgwatch(env, "wait", "gpu129", "--timeout", "60")
    assert r.returncode == exitcodes.AMBIGUOUS, r.stderr
    listed = [line.split() for line in r.stderr.splitlines() if line.startswith("  /")]
    assert [words[0] for words in listed] == [
        str(places / "runs" / "newer.log"),
        str(places / "older.log"),
    ]
    assert listed[0][-2:] == ["sglang", "LOADING"]
    assert "--log PATH" in r.stderr


def test_an_old_log_or_a_file_no_server_wrote_is_not_one_exit_4(host, tmp_path):
    env = env_for(host, tmp_path)
    places = Path(env[PLACES_ENV])
    write(places / "yesterday.log", LOADING, 2 * 3600)
    write(places / "notes.log", b"benchmark notes: try --tp 2 next\n", 60)
    r = sgwatch(env, "wait", "gpu129", "--timeout", "60")
    assert r.returncode == exitcodes.NO_SERVER, r.stderr
    assert "no server running" in r.stderr
