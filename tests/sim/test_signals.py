"""How the simulated server stops: SIGTERM drains, SIGINT shuts down, SIGKILL of
its process group leaves nothing behind."""

import json
import os
import re
import signal
import subprocess

from tests.integration.helpers import wait_until
from tests.sim.simproc import READY
from tests.sim.smi_csv import parse_apps_csv

SMALL = ("--model-path", "Qwen/Qwen3-0.6B", "--cuda-graph-max-bs", "8")


def test_sigterm_drains_in_flight_requests_then_exits(launch, state_dir):
    # 2500 tokens at 50 tok/s: 50 simulated seconds, one real second at speed 50.
    sim = launch(*SMALL, "--sim-speed", "50", "--sim-tok-s", "50")
    sim.wait_ready()
    body = {"text": "Tell me", "sampling_params": {"max_new_tokens": 2500}, "stream": True}
    events = sim.stream("/generate", body)
    next(events)
    sim.signal(signal.SIGTERM)
    sim.wait_for(b"SIGTERM received. signum=15 frame=None. Draining requests and shutting down...")
    assert sim.get("/health")[0] == 503
    late = {"text": "late", "sampling_params": {"max_new_tokens": 5}}
    assert sim.post("/generate", late)[0] == 503
    rest = list(events)
    assert rest[-1] == "[DONE]"
    assert json.loads(rest[-2])["meta_info"]["completion_tokens"] == 2500  # nothing cut off
    assert sim.wait_exit(30) == 0
    log = sim.log()
    assert re.search(rb"Gracefully exiting\.\.\. Remaining number of requests 1\. ", log)
    assert log.rstrip().endswith(f"INFO:     Finished server process [{sim.proc.pid}]".encode())
    assert sim.summary().state == "stopped"
    assert list(state_dir.glob("*.json")) == []


def test_sigterm_before_the_first_request_kills_at_once(launch, state_dir):
    sim = launch(*SMALL, "--sim-speed", "10")
    sim.wait_for(b"Load weight begin")
    sim.signal(signal.SIGTERM)
    assert sim.wait_exit(10) == -signal.SIGTERM  # SGLang has no handler yet
    assert READY not in sim.log()
    assert list(state_dir.glob("*.json")) == []


def test_sigint_shuts_down_without_draining(launch):
    sim = launch(*SMALL, "--sim-speed", "300")
    sim.wait_ready()
    sim.signal(signal.SIGINT)
    assert sim.wait_exit(10) == 0
    assert b"INFO:     Shutting down\n" in sim.log()
    assert b"SIGTERM received" not in sim.log()
    assert sim.summary().state == "stopped"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigkill_of_the_group_leaves_nothing_behind(launch, smi):
    sim = launch(*SMALL, "--tp", "2", "--sim-speed", "300")
    sim.wait_ready()
    pgid = sim.proc.pid
    # A GPU stream in the same group, as a remote watcher would run it.
    loop = subprocess.Popen(
        [str(smi.path), "--query-gpu=index,memory.used", "--format=csv", "-lms", "100"],
        stdout=subprocess.DEVNULL,
        process_group=pgid,
        env=smi.env,
    )
    apps = parse_apps_csv(smi("--query-compute-apps=pid,process_name,used_gpu_memory").stdout)
    assert {a.pid for a in apps} == {sim.proc.pid} and len(apps) == 2
    os.killpg(pgid, signal.SIGKILL)
    assert sim.wait_exit(10) == -signal.SIGKILL
    assert loop.wait(10) == -signal.SIGKILL
    assert wait_until(lambda: not _group_alive(pgid))  # its children, killed with it
    # The dead server's GPU state no longer counts.
    assert parse_apps_csv(smi("--query-compute-apps=pid,process_name,used_gpu_memory").stdout) == []
