"""`sgwatch events` and `sgwatch wait` as a script runs them, while the link drops.

Each drop is an event a script can read (`link` stale with its cause, then live with
`reconnected`), the exit status stays honest (a timeout is a timeout, never a crash),
and no traceback reaches stderr, whatever broke.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import threading
import time

import pytest

from sgwatch.cli import exitcodes
from tests.fault.conftest import ALIAS, figures
from tests.fault.hostside import NumberedServer
from tests.integration.headless import cli_env
from tests.integration.helpers import wait_until
from tests.integration.sshd import free_port

DROPS = 5


@pytest.fixture
def env(host, flaky_config, tmp_path) -> dict[str, str]:
    """A user whose ~/.ssh/config has `flaky129` (the sshd through the proxy)."""
    env = cli_env(host, tmp_path / "home")
    (tmp_path / "home" / ".ssh" / "config").write_text(flaky_config.read_text())
    return env


def sgwatch(env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "sgwatch", *args],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def lines_of(proc: subprocess.Popen) -> queue.Queue[str]:
    q: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [q.put(line) for line in proc.stdout], daemon=True).start()
    return q


def next_link(q: queue.Queue[str], state: str, timeout: float = 20) -> dict:
    while True:
        e = json.loads(q.get(timeout=timeout))
        if e["event"] == "link" and e["state"] == state:
            return e


def test_events_reports_each_drop_and_recovery_as_json(host, proxy, env, tmp_path):
    server = NumberedServer(host, tmp_path)
    proc = sgwatch(env, "events", "--json", ALIAS, "--pid", str(server.pid))
    try:
        q = lines_of(proc)
        assert next_link(q, "live")["reconnected"] is False
        for i in range(DROPS):
            if i % 2:
                proxy.reset()
            else:
                host.kill_connections()
            stale = next_link(q, "stale")
            assert "connection lost" in stale["reason"], stale
            assert next_link(q, "live")["reconnected"] is True
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
        server.kill()
    assert "Traceback" not in err, err


def test_events_read_by_a_reader_that_goes_away_exits_quietly(host, env, tmp_path):
    """`sgwatch events ... | head -1`: the pipe closes under it (EPIPE), as a closed
    terminal does (EIO); it ends without a traceback."""
    server = NumberedServer(host, tmp_path)
    proc = sgwatch(env, "events", "--json", ALIAS, "--pid", str(server.pid))
    try:
        assert json.loads(proc.stdout.readline())["event"]
        proc.stdout.close()  # the reader is gone; the next event hits a closed pipe
        host.kill_connections()  # (which this makes happen at once)
        status = proc.wait(20)
        err = proc.stderr.read()
    finally:
        proc.kill()
        server.kill()
    assert "Traceback" not in err, err
    assert status == exitcodes.OK


def test_wait_through_drops_times_out_honestly(host, proxy, env, tmp_path):
    """The numbered server is never ready: through drops, `wait` ends by its timeout
    (never "crashed", never "unreachable"), each drop and recovery on its output."""
    server = NumberedServer(host, tmp_path)
    proc = sgwatch(env, "wait", ALIAS, "--pid", str(server.pid), "--timeout", "12")
    seen: list[str] = []
    try:
        q = lines_of(proc)
        for _ in range(DROPS):
            # "HH:MM:SS flaky129 following: ..." / "... reconnected: ..."
            while not seen or not seen[-1].split(" ", 2)[2].startswith(("following", "reconn")):
                seen.append(q.get(timeout=20))
            proxy.reset()
            seen.append(q.get(timeout=20))
        status = proc.wait(30)
        err = proc.stderr.read()
    finally:
        proc.kill()
        server.kill()
    assert status == exitcodes.TIMED_OUT, (status, err)
    assert "Traceback" not in err, err
    assert sum("connection lost" in line for line in seen) == DROPS, seen


def test_a_drop_in_the_first_handshake_is_retried_not_unreachable(host, proxy, env, tmp_path):
    """sshd answers, but the first connections are reset inside their SSH handshake
    (after sshd's first 200 bytes): a drop like any later one, reported and retried
    within the timeout; the server is followed once a handshake gets through."""
    server = NumberedServer(host, tmp_path)
    proxy.cut_after = 200
    proc = sgwatch(env, "wait", ALIAS, "--pid", str(server.pid), "--timeout", "10")
    seen: list[str] = []
    try:
        q = lines_of(proc)
        seen.append(q.get(timeout=20))
        assert wait_until(lambda: proxy.accepted >= 3, 20)  # three handshakes cut
        proxy.cut_after = None
        healed, cut = time.monotonic(), proxy.accepted
        while not seen[-1].split(" ", 2)[2].startswith(("following", "reconn")):
            seen.append(q.get(timeout=20))
        figures(test="first-handshake", cut=cut, resume_s=time.monotonic() - healed)
        status = proc.wait(30)
        err = proc.stderr.read()
    finally:
        proc.kill()
        server.kill()
    assert any("stale: " in line and "connection lost" in line for line in seen), seen
    assert status == exitcodes.TIMED_OUT, (status, seen, err)  # never ready; not unreachable
    assert "Traceback" not in err, err


def test_restart_retries_a_drop_in_the_first_handshake(proxy, env):
    """A one-off action too: the first handshakes cut, `restart` gets through and answers
    about the host (no server runs on it: exit 4), not that the host is unreachable."""
    proxy.cut_after = 200
    proc = sgwatch(env, "restart", ALIAS, "--yes")
    try:
        assert wait_until(lambda: proxy.accepted >= 3, 20)  # three handshakes cut
        proxy.cut_after = None
        status = proc.wait(60)
        err = proc.stderr.read()
    finally:
        proc.kill()
    assert status == exitcodes.NO_SERVER, (status, err)
    assert "Traceback" not in err, err


def test_a_host_that_does_not_answer_at_all_is_unreachable_at_once(env, tmp_path):
    """Nothing listens on its port (every connection refused): not a drop to wait out."""
    config = tmp_path / "home" / ".ssh" / "config"
    first = config.read_text().split("\n\n")[0]
    down = re.sub(
        r"Port \d+", f"Port {free_port()}", first.replace(f"Host {ALIAS}", "Host down129")
    )
    config.write_text(config.read_text() + "\n\n" + down)
    proc = sgwatch(env, "wait", "down129", "--timeout", "30")
    status = proc.wait(10)
    err = proc.stderr.read()
    assert status == exitcodes.UNREACHABLE, (status, err)
    assert "cannot connect" in err + proc.stdout.read() and "Traceback" not in err, err
