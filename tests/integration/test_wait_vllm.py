"""`sgwatch wait` on a vLLM server's log over sshd, written as vLLM writes it: the same
phase lines and outcome as for SGLang."""

from __future__ import annotations

import re

from sgwatch.cli import exitcodes
from tests.conftest import FIXTURES
from tests.integration.headless import Lines, cli_env, start

VLLM = FIXTURES / "vllm"


def write_as_it_runs(log, fixture, lines: Lines, marks: dict[str, str]) -> None:
    """Append the fixture line by line; after a line holding a key of `marks`, wait
    until `wait` has said the phase it names (as a server's pace would let it)."""
    with open(log, "a") as f:
        for line in (VLLM / fixture).read_text().splitlines(keepends=True):
            f.write(line)
            f.flush()
            if phase := next((p for mark, p in marks.items() if mark in line), None):
                lines.until(lambda said, phase=phase: said.endswith(f" phase {phase}"))


def test_wait_follows_a_vllm_warmup_to_ready(host, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "vllm.log"
    log.touch()
    lines = Lines(
        start(env, "wait", "gpu129", "--log", str(log), "--timeout", "60", "--every", "0")
    )
    lines.until(lambda line: "following" in line)
    marks = {
        "vLLM API server version": "starting",
        "Starting to load model": "loading_weights",
        "Loading weights took": "allocating_kv_cache",
        "Dynamo bytecode transform": "compiling",
        "PIECEWISE):   0%": "capturing_graphs",
        "Graph capturing finished": "warming_up",
        "Application startup complete": "ready",
    }
    write_as_it_runs(log, "v1_startup_serving.log", lines, marks)
    status, out, err = lines.finish()
    assert status == exitcodes.OK, err
    assert re.search(r"READY after \d+\.\d s$", out.splitlines()[-1])
    phases = re.findall(r" phase (\w+)$", out, re.M)
    # Between the PIECEWISE and the FULL bar every capture so far has ended: the server
    # reads as warming up until the next bar begins, when both arrive in separate reads.
    captures = phases[4:-2]
    one_read = ["capturing_graphs"]
    two_reads = ["capturing_graphs", "warming_up", "capturing_graphs"]
    assert captures in (one_read, two_reads), phases
    assert phases[:4] + phases[-2:] == [
        "starting",
        "loading_weights",
        "allocating_kv_cache",
        "compiling",
        "warming_up",
        "ready",
    ]
    assert "piecewise 67/67" in out and "decode 35/35" in out


def test_wait_on_a_vllm_crash_names_the_cause(host, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "vllm.log"
    log.touch()
    lines = Lines(start(env, "wait", "gpu129", "--log", str(log), "--timeout", "60"))
    lines.until(lambda line: "following" in line)
    write_as_it_runs(
        log, "v1_crash_oom_capture.log", lines, {"GPU KV cache size": "allocating_kv_cache"}
    )
    status, _out, err = lines.finish()
    assert status == exitcodes.FAILED
    assert "CRASHED during capturing_graphs: torch.OutOfMemoryError: CUDA out of memory" in err
