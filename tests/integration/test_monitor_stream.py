"""What an agent reads: `events --json` as a monitor stream (a versioned JSON object a
line, each flushed as it happens), `wait --quiet --every S` for an agent without a
monitor, and the tuning loop (restart with a flag edit, wait for ready, read tok/s) in
under 40 lines. The real command line over sshd, against simulated servers."""

from __future__ import annotations

import json
import re
import signal

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
    """Restart with `--enforce-piecewise-cuda-graph`, wait for ready, read tok/s: every
    line the agent reads is counted."""
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    port = sims.launch(log, *QWEN, speed="20")
    old = sims.pids[0]
    up = sgwatch(env, "wait", "gpu129", "--pid", str(old), "--timeout", "120", "--quiet")
    assert up.returncode == exitcodes.OK, up.stderr

    restart = ("restart", "gpu129", "--pid", str(old), "--enable", "enforce-piecewise-cuda-graph")
    r = sgwatch(env, *restart, "--yes", "--timeout", "120")
    read = r.stdout.splitlines() + r.stderr.splitlines()
    restarted = next((x for x in read if x.startswith("restarted: pid ")), None)
    if restarted is not None:  # the fixture stops it too
        sims.pids.append(int(restarted.split()[2].rstrip(";")))
    assert r.returncode == exitcodes.OK, read
    assert "+ --enforce-piecewise-cuda-graph" in read and "READY" in read[-1]

    monitor = Lines(start(env, "events", "gpu129", "--log", str(log), "--json", "--only",
                          "crash,throughput"))  # fmt: skip
    try:
        generate(port, tokens=200)  # the agent's own traffic, or its benchmark
        tok_s = json.loads(monitor.until(lambda line: '"throughput"' in line))
    finally:
        monitor.proc.send_signal(signal.SIGINT)
        monitor.finish()
    read += monitor.seen
    assert tok_s["gen_tok_s"] > 0 and tok_s["samples"] >= 1
    print(f"the tuning loop: {len(read)} lines read")
    assert len(read) < 40, read
