"""What an agent reads: `events --json` as a monitor stream (a versioned JSON object a
line, each flushed as it happens), `wait --quiet --every S` for an agent without a
monitor, and the tuning loop (restart with a flag edit, wait for ready, read tok/s) in
under 40 lines. The real command line over sshd, against simulated servers."""

from __future__ import annotations

import json
import re
import signal
import threading

from sgwatch.cli import exitcodes
from sgwatch.cli.wait_events import STREAM_VERSION
from tests.integration.headless import QWEN, Lines, cli_env, generate, sgwatch, start

STATUS = re.compile(r"^\d\d:\d\d:\d\d gpu129 [a-z_ ]+(, .+)?$")


def test_each_event_is_a_versioned_line_read_while_the_stream_runs(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    events = Lines(start(env, "events", "gpu129", "--log", str(log), "--json"))
    # The log is not there yet: the line saying so comes through the pipe while the
    # stream runs, not when the process ends and a buffer is flushed.
    waiting = json.loads(events.until(lambda line: '"waiting"' in line))
    assert events.proc.poll() is None
    assert waiting["v"] == STREAM_VERSION and waiting["event"] == "link"
    sims.launch(log, *QWEN)
    events.until(lambda line: json.loads(line)["event"] == "ready")
    assert events.proc.poll() is None  # still following: the stream goes on after ready
    events.proc.send_signal(signal.SIGINT)
    status, _, err = events.finish()
    assert status == exitcodes.OK, err
    seen = [json.loads(line) for line in events.seen]
    assert all(e["v"] == STREAM_VERSION for e in seen)
    assert all(list(e)[:4] == ["v", "event", "host", "time"] for e in seen)


def test_wait_quiet_every_says_one_status_line_per_period_then_the_outcome(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    args = ("wait", "gpu129", "--log", str(log), "--timeout", "120", "--quiet", "--every", "1")
    wait = Lines(start(env, *args))
    first = wait.until(lambda line: True)  # a status line while it waits, not at the end
    assert wait.proc.poll() is None and STATUS.match(first), first
    sims.launch(log, *QWEN, speed="10")  # a warmup of several seconds
    status, out, err = wait.finish()
    assert status == exitcodes.OK, err
    lines = out.splitlines()
    assert re.search(r"READY after \d+\.\d s$", lines[-1])
    beats = lines[:-1]
    assert len(beats) >= 3, lines
    assert all(STATUS.match(line) and len(line) < 100 for line in beats), beats
    assert not any(" phase " in line for line in beats)  # nothing but the status lines
    states = {line.split()[2].rstrip(",") for line in beats}
    assert states & {"loading_weights", "capturing_graphs", "warming_up", "allocating_kv_cache"}

    zero = sgwatch(env, "wait", "gpu129", "--log", str(log), "--quiet", "--every", "0")
    assert zero.returncode == exitcodes.USAGE and "needs S > 0" in zero.stderr


def test_the_tuning_loop_by_the_command_line_reads_under_40_lines(host, sims, tmp_path):
    """Restart with `--enforce-piecewise-cuda-graph`, wait for ready, read tok/s and its
    share of the bandwidth ceiling: every line the agent reads is counted."""
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    port = sims.launch(log, *QWEN, speed="20")
    old = sims.pids[0]
    up = sgwatch(env, "wait", "gpu129", "--pid", str(old), "--timeout", "120", "--quiet")
    assert up.returncode == exitcodes.OK, up.stderr

    # The agent's monitor runs first, through the restart; then requests come (its own
    # traffic, or a benchmark) and it reads the new run's decode rate.
    only = "link,crash,throughput"
    monitor = Lines(start(env, "events", "gpu129", "--log", str(log), "--json", "--only", only))
    traffic = Traffic(port)
    try:
        monitor.until(lambda line: '"state":"live"' in line)
        restart = (
            "restart",
            "gpu129",
            "--pid",
            str(old),
            "--enable",
            "enforce-piecewise-cuda-graph",
        )
        r = sgwatch(env, *restart, "--yes", "--timeout", "120")
        read = r.stdout.splitlines() + r.stderr.splitlines()
        restarted = next((x for x in read if x.startswith("restarted: pid ")), None)
        if restarted is not None:  # the fixture stops it too
            sims.pids.append(int(restarted.split()[2].rstrip(";")))
        assert r.returncode == exitcodes.OK, read
        assert "+ --enforce-piecewise-cuda-graph" in read and "READY" in read[-1]
        traffic.start()
        tok_s = json.loads(monitor.until(shared))
    finally:
        traffic.stop()
        monitor.proc.send_signal(signal.SIGINT)
        monitor.finish()
    read += monitor.seen
    assert tok_s["gen_tok_s"] > 0 and tok_s["samples"] >= 1
    # one request at a time: the sample's share of the GPUs' bandwidth ceiling
    assert tok_s["running_req"] == 1 and tok_s["ceiling_tok_s"] > tok_s["gen_tok_s"]
    assert tok_s["share_of_ceiling_pct"] == round(
        100 * tok_s["gen_tok_s"] / tok_s["ceiling_tok_s"], 1
    )
    print(f"the tuning loop: {len(read)} lines read")
    assert len(read) < 40, read


def shared(line: str) -> bool:
    """A throughput line with its share of the ceiling (the GPUs are known by then)."""
    e = json.loads(line)
    return e["event"] == "throughput" and e["share_of_ceiling_pct"] is not None


class Traffic:
    """One request after another to a server until stopped, as a client keeps it busy."""

    def __init__(self, port: int) -> None:
        self._port, self._stop = port, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            generate(self._port, tokens=100)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=60)
