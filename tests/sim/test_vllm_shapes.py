"""The simulated vLLM cannot drift into invented formats: every record it prints belongs
to a family of real vLLM V1 output (vllm_families.toml), and every family is real."""

from __future__ import annotations

import re
import signal
import socket
from pathlib import Path

import pytest

from tests.sim.shapes import MACROS, Family, load_families, undocumented
from tests.sim.shapes import family_of as shape_family_of
from tests.sim.shapes import records as shape_records
from tests.sim.simproc import Sim, sim_env

# A process tag, coloured (the escape byte kept, or lost in a paste) or not.
_COLOUR = r"(?:\x1b?\[[0-9;]*m)?"
TAG = re.compile(rf"(?:{_COLOUR}\((?:\w+)(?: rank=\d+)? pid=\d+\){_COLOUR} ?)+")
_STAMP = r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d \[[\w.]+\.py:\d+\] "
# A record written while a tqdm bar was open starts right after the bar's frame.
_GLUED = re.compile(r"(?<=it/s\])(?=.)|(?<=s/it\])(?=.)")
READY = b"Application startup complete."
SOURCES = ("log-formats.md", "python", "uvicorn", "vllm-0.11.0")


FAMILIES = load_families("vllm_families.toml", {**MACROS, "{STAMP}": _STAMP}, key="tagged")


def records(log: bytes) -> list[tuple[bool, str]]:
    """(tagged, text) per record, the process tag(s) stripped."""
    return shape_records(log, TAG, _GLUED)


def family_of(tagged: bool, text: str) -> Family | None:
    return shape_family_of(tagged, text, FAMILIES)


@pytest.fixture(scope="module")
def vllm_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Each way the simulated vLLM runs, once: its whole log."""
    folder = tmp_path_factory.mktemp("vllm-shapes")
    env = sim_env(folder / "gpu-state")
    fast = ("--sim-speed", "60")
    runs = {
        "serving tp2": ["Qwen/Qwen3-0.6B", "-tp", "2", *fast],
        "spec": [
            "Qwen/Qwen3-0.6B",
            "--speculative-config",
            '{"method": "eagle3", "model": "x", "num_speculative_tokens": 3}',
            *fast,
        ],
        "oom": ["Qwen/Qwen3-0.6B", "--gpu-memory-utilization", "0.99", *fast],
        "no kv room": ["Qwen/Qwen3-32B", "--gpu-memory-utilization", "0.3", *fast],
        "unknown flag": ["Qwen/Qwen3-0.6B", "--no-such-flag", *fast],
        "bad value": ["Qwen/Qwen3-0.6B", "--max-num-seqs", "many", *fast],
    }
    sims = {name: Sim(["vllm", "serve", *argv], folder, env) for name, argv in runs.items()}
    # vLLM binds its port after the banner (3 simulated seconds): take it first
    sims["port taken"] = Sim(["vllm", "serve", "Qwen/Qwen3-0.6B"], folder, env)
    taken = socket.create_server(("127.0.0.1", sims["port taken"].port))
    try:
        for name in ("serving tp2", "spec"):
            sim = sims[name]
            sim.wait_for(READY, 60)
            for n in range(3):
                body = {"messages": [{"role": "user", "content": f"hello {n}"}], "max_tokens": 400}
                assert sim.post("/v1/chat/completions", body)[0] == 200
            sim.wait_for(b"Avg prompt throughput", 60)
            if name == "spec":
                sim.wait_for(b"SpecDecoding metrics", 60)
            sim.signal(signal.SIGTERM)
            assert sim.wait_exit(30) == 0
        for name in ("oom", "no kv room", "port taken"):
            assert sims[name].wait_exit(60) == 1
        for name in ("unknown flag", "bad value"):
            assert sims[name].wait_exit(30) == 2
        return {name: sim.log() for name, sim in sims.items()}
    finally:
        taken.close()
        for sim in sims.values():
            sim.close()


def test_every_simulated_record_belongs_to_a_real_family(vllm_logs):
    unknown = {
        (name, text[:160])
        for name, log in vllm_logs.items()
        for tagged, text in records(log)
        if family_of(tagged, text) is None
    }
    assert sorted(unknown) == []


def test_every_family_is_printed_by_some_run(vllm_logs):
    used = {
        family.name
        for log in vllm_logs.values()
        for tagged, text in records(log)
        if (family := family_of(tagged, text)) is not None
    }
    assert sorted(f.name for f in FAMILIES if f.name not in used) == []


def test_each_family_matches_its_real_log(corpus: Path):
    missing = []
    for family in FAMILIES:
        if family.source in SOURCES:
            continue
        real = records((corpus / family.source).read_bytes())
        if not any(t == family.prefixed and family.matches(x) for t, x in real):
            missing.append((family.name, family.source))
    assert missing == []


def test_each_documented_family_is_in_the_design_notes():
    assert undocumented(FAMILIES) == []
    assert all(f.snippet for f in FAMILIES if f.source == "vllm-0.11.0")
