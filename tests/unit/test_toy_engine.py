"""An engine sgwatch has never heard of (tests/toyengine), registered from outside:
the registry loads it from SGWATCH_ENGINES, and `replay` reads its logs."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.toyengine.run import registered, write_log

NAMES = "import sgwatch.engines as e; print(' '.join(x.name for x in e.all_engines()))"


def engines_seen(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", NAMES], env=env, capture_output=True, text=True, timeout=60
    )


def replay(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sgwatch", "replay", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_registry_loads_the_toy_beside_the_built_in_and_entry_point_engines():
    r = engines_seen(registered())
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.split() == ["sglang", "vllm", "sim", "toy"]


def test_an_engine_that_fails_to_load_is_one_line_on_stderr_and_skipped():
    env = registered()
    env["SGWATCH_ENGINES"] = ",".join(
        ("no.such.module:ENGINE", "tests.toyengine:NAME", "tests.toyengine", env["SGWATCH_ENGINES"])
    )
    r = engines_seen(env)
    assert r.returncode == 0
    assert r.stdout.split() == ["sglang", "vllm", "sim", "toy"]
    assert r.stderr.splitlines() == [
        "sgwatch: engine no.such.module:ENGINE not loaded"
        " (ModuleNotFoundError: No module named 'no')",
        "sgwatch: engine tests.toyengine:NAME not loaded (str is not an Engine)",
        "sgwatch: engine tests.toyengine not loaded (ValueError: expected module:ATTR)",
    ]


def test_replay_reads_a_toy_log_to_serving(tmp_path):
    log = write_log(tmp_path / "toy.log", "--model", "tiny/toy-1b", "--decodes", "3")
    r = replay(registered(), "--json", str(log))
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)
    assert (run["engine"], run["version"], run["state"], run["ready"]) == (
        "toy",
        "0.1.0",
        "serving",
        True,
    )
    assert [p["name"] for p in run["phases"]] == [
        "starting",
        "loading_weights",
        "allocating_kv_cache",
    ]
    assert run["weights"]["seconds"] == 1.5
    assert run["model"] == "tiny/toy-1b"  # the identity the toy's parser built
    assert run["throughput"]["samples"] == 3 and run["throughput"]["gen_tok_s_last"] == 104.5

    text = replay(registered(), str(log))
    assert text.returncode == 0
    assert text.stdout.startswith(f"{log}: toy 0.1.0, tiny/toy-1b, 7 lines")


def test_replay_says_where_and_why_a_toy_crashed(tmp_path):
    log = write_log(tmp_path / "toy.log", "--model", "m", "--crash-at", "loading")
    run = json.loads(replay(registered(), "--json", str(log)).stdout)
    assert run["state"] == "crashed" and not run["ready"]
    assert run["crash"]["summary"] == "RuntimeError: the toy fell over while loading weights"
    assert run["crash"]["phase"] == "loading_weights"


def test_without_the_registration_the_toy_log_is_no_engine_s(tmp_path):
    # the same log, the toy not registered: nothing recognises it (what the tests above prove)
    log = write_log(tmp_path / "toy.log", "--model", "m", "--decodes", "1")
    env = registered()
    del env["SGWATCH_ENGINES"]
    run = json.loads(replay(env, "--json", str(log)).stdout)
    assert run["engine"] is None and run["state"] == "starting"
