"""The headless commands started as a shell's background job: SIGINT ignored on purpose.

A non-interactive shell starts `cmd &` with SIGINT ignored, and the commands keep it so
(README, Exit status); SIGTERM is how such a job is stopped, and it must end the command
and everything it ran on the host.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from tests.integration.headless import QWEN, Lines, cli_env
from tests.integration.helpers import wait_until
from tests.integration.sshd import descendants
from tests.integration.test_events import kind


def _as_background_job() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_sigterm_ends_events_started_as_a_background_job_and_its_followers(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sgwatch", "events", "gpu129", "--log", str(log), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        preexec_fn=_as_background_job,
    )
    events = Lines(proc)
    events.until(kind("link", state="waiting"))
    sims.launch(log, *QWEN)
    events.until(kind("ready"))
    events.until(kind("gpu"))  # the GPU sampler runs on the host too
    server = host.outside_pid(sims.pids[0])
    theirs = {server, *descendants(server)}
    followers = [p for p in host.remote_processes() if p[0] not in theirs]
    assert followers, "events runs nothing on the host: nothing to check"

    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    status, _, err = events.finish(timeout=10)
    assert time.monotonic() - sent < 2.0
    assert status == -signal.SIGTERM and "Traceback" not in err
    left = lambda: [p for p in followers if p[0] in host_pids(host)]  # noqa: E731
    assert wait_until(lambda: not left()), left()
    assert theirs <= host_pids(host)  # the server lives on


def host_pids(host) -> set[int]:
    return {pid for pid, _ in host.remote_processes()}
