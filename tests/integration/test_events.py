"""`sgwatch events HOST --json`: the real command line over sshd against simulated
servers; every line is one JSON event with the documented fields and types."""

from __future__ import annotations

import json
import signal

from sgwatch.cli import exitcodes
from tests.integration.headless import (
    CRASH_KV,
    Lines,
    cli_env,
    generate,
    sgwatch,
    start,
)
from tests.integration.sshd import free_port

OPT_STR, OPT_INT, NUM = (str, type(None)), (int, type(None)), (int, float, type(None))
COMMON = {"v": int, "event": str, "host": str, "time": str}  # v: the stream's version
SCHEMA = {
    "link": {"state": str, "reason": OPT_STR, "source": OPT_STR, "reconnected": bool},
    "note": {"text": str},
    "phase": {"state": str, "previous": OPT_STR, "new_run": bool, "ts": OPT_STR},
    "progress": {
        "kind": str,
        "done": int,
        "total": OPT_INT,
        "current": OPT_INT,
        "rate": NUM,
        "eta_s": NUM,
    },
    "throughput": {
        "gen_tok_s": (int, float),
        "samples": int,
        "running_req": OPT_INT,
        "queue_req": OPT_INT,
        "ts": OPT_STR,
        "ceiling_tok_s": NUM,
        "share_of_ceiling_pct": NUM,
    },
    "gpu": {
        "index": int,
        "name": OPT_STR,
        "util_pct": NUM,
        "mem_used_mib": NUM,
        "mem_total_mib": NUM,
        "power_w": NUM,
        "temp_c": NUM,
    },
    "ready": {"ready_at": OPT_STR, "warmup_seconds": NUM},
    "crash": {
        "summary": str,
        "exception": OPT_STR,
        "line": str,
        "phase": str,
        "exit_code": OPT_INT,
        "ts": OPT_STR,
        "remedy": (dict, type(None)),
    },
}


def check_schema(lines: list[str]) -> list[dict]:
    events = [json.loads(line) for line in lines]
    for e in events:
        fields = {**COMMON, **SCHEMA[e["event"]]}
        assert set(e) == set(fields), e
        for key, kind in fields.items():
            assert isinstance(e[key], kind), (key, e)
        assert e["host"] == "gpu129"
    return events


def kind(name: str, **match):
    def found(line: str) -> bool:
        e = json.loads(line)
        return e["event"] == name and all(e[k] == v for k, v in match.items())

    return found


def test_a_warmup_traffic_and_a_dropped_link_as_json_lines(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    events = Lines(start(env, "events", "gpu129", "--log", str(log), "--json"))
    events.until(kind("link", state="waiting"))
    port = sims.launch(log, "--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16")
    events.until(kind("ready"))
    generate(port, tokens=200)
    events.until(kind("throughput"))
    events.until(kind("gpu"))

    host.kill_connections()  # the network drops: stale, then back by itself
    events.until(kind("link", state="stale"))
    events.until(kind("link", state="live", reconnected=True))
    events.proc.send_signal(signal.SIGINT)
    status, _, err = events.finish()
    assert status == exitcodes.OK and "Traceback" not in err

    seen = check_schema(events.seen)
    phases = [e["state"] for e in seen if e["event"] == "phase"]
    assert phases[-2:] == ["ready", "serving"]
    assert "loading_weights" in phases and "capturing_graphs" in phases
    decode = [(e["done"], e["total"]) for e in seen if e.get("kind") == "decode"]
    assert decode == sorted(decode) and decode[-1][0] == decode[-1][1]
    (ready,) = [e for e in seen if e["event"] == "ready"]
    assert ready["warmup_seconds"] > 0
    tput = [e for e in seen if e["event"] == "throughput"]
    assert all(e["gen_tok_s"] > 0 for e in tput)
    assert any(e["event"] == "gpu" and e["mem_total_mib"] for e in seen)
    assert not any(e["event"] == "crash" for e in seen)


def test_only_the_kinds_asked_for(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    args = ("events", "gpu129", "--log", str(log), "--json", "--only", "link,phase,ready")
    events = Lines(start(env, *args))
    events.until(kind("link", state="waiting"))
    sims.launch(log, "--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16")
    events.until(kind("ready"))
    events.proc.send_signal(signal.SIGINT)
    status, _, err = events.finish()
    assert status == exitcodes.OK, err
    seen = check_schema(events.seen)
    assert {e["event"] for e in seen} == {"link", "phase", "ready"}  # no progress, no gpu
    assert "capturing_graphs" in [e["state"] for e in seen if e["event"] == "phase"]

    bad = sgwatch(env, "events", "gpu129", "--json", "--only", "phase,capture")
    assert bad.returncode == exitcodes.USAGE and "unknown kind capture" in bad.stderr


def test_a_crash_is_one_event_and_the_stream_goes_on(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    events = Lines(start(env, "events", "gpu129", "--log", str(log), "--json"))
    events.until(kind("link", state="waiting"))
    sims.launch(log, *CRASH_KV)
    crash = json.loads(events.until(kind("crash")))
    assert crash["summary"].startswith("RuntimeError: Not enough memory.")
    assert crash["phase"] == "allocating_kv_cache"
    assert events.proc.poll() is None  # still following: a restart may come
    events.proc.send_signal(signal.SIGINT)
    status, _, _ = events.finish()
    assert status == exitcodes.OK
    seen = check_schema(events.seen)
    assert [e["state"] for e in seen if e["event"] == "phase"][-1] == "crashed"
    assert sum(e["event"] == "crash" for e in seen) == 1


def test_an_unreachable_host_is_a_failed_link_event_and_exit_3(host, tmp_path):
    extra = f"Host gone\n    HostName 127.0.0.1\n    Port {free_port()}\n    User {host.user}\n"
    env = cli_env(host, tmp_path / "home", extra)
    events = Lines(start(env, "events", "gone", "--json"))
    status, out, _ = events.finish()
    assert status == exitcodes.UNREACHABLE
    last = json.loads(out.splitlines()[-1])
    assert (last["event"], last["state"]) == ("link", "failed")
    assert last["reason"].startswith("gone: cannot connect")


def test_several_servers_end_the_stream_at_once_asking_for_a_pid(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    for name in ("a.log", "b.log"):
        sims.launch(tmp_path / name, "--model-path", "Qwen/Qwen3-8B")
    r = sgwatch(env, "events", "gpu129", "--json")
    assert r.returncode == exitcodes.AMBIGUOUS, r.stderr
    seen = check_schema(r.stdout.splitlines())
    last = seen[-1]
    assert (last["event"], last["state"]) == ("link", "failed")
    assert sum("pick one with --pid" in json.dumps(e) for e in seen) == 1  # said once
    named = last["reason"].splitlines()
    assert "pick one with --pid" in named[0]
    assert all(any(f"pid {pid}: " in line for line in named[1:]) for pid in sims.pids)
