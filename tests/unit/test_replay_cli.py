"""`sgwatch replay` as a user runs it: the installed console script, exit codes, output."""

import json
import subprocess
import sys
from pathlib import Path

import sgwatch
from tests.conftest import FIXTURES

SGWATCH = [str(Path(sys.executable).with_name("sgwatch"))]
# The summary's field names, exactly: a rename breaks every script built on `replay --json`.
CONTRACT = {
    "engine",
    "version",
    "state",
    "ready",
    "phases",
    "graph_captures",
    "throughput",
    "crash",
    "lines",
}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SGWATCH, *args], capture_output=True, text=True, timeout=60)


def test_version():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"sgwatch {sgwatch.__version__}"


def test_json_summary_has_the_documented_fields():
    r = run("replay", str(FIXTURES / "sglang/old_phases_0_4.log"), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out.keys() >= CONTRACT
    assert set(out["phases"][0]) >= {"name", "started_at", "ended_at", "seconds"}
    assert set(out["graph_captures"][0]) >= {"kind", "done", "total", "seconds"}
    assert set(out["throughput"]) >= {
        "samples",
        "gen_tok_s_last",
        "gen_tok_s_max",
        "gen_tok_s_median",
        "accept_len_mean",
    }
    assert out["state"] == "serving" and out["ready"] is True
    assert out["phases"][1]["started_at"] == "2025-03-20T10:00:06"
    assert (out["model"], out["tp_size"]) == ("meta-llama/Llama-3.1-8B-Instruct", 1)


def test_crash_in_the_log_is_reported_not_replays_own_failure():
    r = run("replay", str(FIXTURES / "sglang/crash_capture_oom.log"))
    assert r.returncode == 0
    assert "CRASHED" in r.stdout
    assert "Capture cuda graph failed: CUDA out of memory" in r.stdout
    crash = json.loads(
        run("replay", str(FIXTURES / "sglang/crash_capture_oom.log"), "--json").stdout
    )
    assert set(crash["crash"]) >= {"summary", "exception", "line"}


def test_missing_file_is_one_line_and_exit_2(tmp_path):
    r = run("replay", str(tmp_path / "nope.log"))
    assert r.returncode == 2
    assert r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "nope.log" in r.stderr


def test_unreadable_path_is_exit_2(tmp_path):
    r = run("replay", str(tmp_path))  # a folder, not a file
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_human_timeline_of_the_bundled_sample():
    r = run("replay", "--sample")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert any("SERVING" in line for line in lines)
    for phase in ("loading_weights", "capturing_graphs", "compiling", "warming_up"):
        assert any(phase in line for line in lines), phase
    assert any("piecewise" in line and "50/50" in line for line in lines)
    assert any("total to ready: 2m24.0s" in line for line in lines)
    assert any(line.startswith("throughput: 63.66 tok/s last") for line in lines)


def test_garbled_binary_file_still_replays(tmp_path):
    junk = tmp_path / "junk.log"
    junk.write_bytes(bytes(range(256)) * 1000 + b"\n[2026-01-01 10:00:00] Load weight begin.\n")
    r = run("replay", str(junk), "--json")
    assert r.returncode == 0
    assert json.loads(r.stdout)["state"] == "loading_weights"
