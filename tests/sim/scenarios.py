"""Launch setups run once per session; several test files read their outcomes.

A serving scenario is driven as a user would: wait for the ready line, send a
plain request, read /server_info, start a long streaming request and SIGTERM
the server while it streams (it drains, then exits). A failing one just runs
to its end. They run a few at a time: each is a
real process that mostly sleeps.
"""

from __future__ import annotations

import json
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from sgwatch.core.summary import Summary
from tests.sim.simproc import READY, Sim, sim_env

FAST = ("--sim-speed", "300", "--sim-seed", "7")


@dataclass(frozen=True)
class Scenario:
    args: tuple[str, ...]
    serve: bool = True  # expected to come up; then traffic and SIGTERM
    entry: str = "sgwatch.sim"  # or "sgwatch" for `python -m sgwatch sim ...`


@dataclass
class Result:
    log: bytes
    returncode: int
    summary: Summary
    server_info: dict | None
    state_files: list[str]  # GPU state files left behind once the process is gone


def _s(*args: str, serve: bool = True, entry: str = "sgwatch.sim") -> Scenario:
    return Scenario((*args, *FAST), serve, entry)


SCENARIOS = {
    # The seed workflow: Qwen 27B on two GPUs with piecewise graphs (50 token sizes).
    "tp2-piecewise-0.5": _s(
        "--model-path", "Qwen/Qwen3.6-27B", "--tp", "2", "--enforce-piecewise-cuda-graph",
        "--sim-format", "0.5", "--unknown-flag", "3", "--enable-something",
        entry="sgwatch",
    ),
    # The seed's first try: NEXTN on, piecewise graphs not enforced.
    "tp2-nextn-seed-0.5": _s(
        "--model-path", "Qwen/Qwen3.6-27B", "--tp", "2", "--speculative-algorithm", "NEXTN",
        "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
        "--cuda-graph-max-bs", "16",
    ),
    "tp1-nograph-0.4": _s(
        "--model-path", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--disable-cuda-graph",
        "--sim-format", "0.4",
    ),
    "tp4-moe-0.4": _s(
        "--model-path", "Qwen/Qwen3-30B-A3B", "--tp", "4", "--cuda-graph-max-bs", "32",
        "--sim-format", "0.4",
    ),
    "tp1-baseline-0.5": _s("--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16"),
    "tp1-nextn-0.5": _s(
        "--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16",
        "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
        "--speculative-num-draft-tokens", "4",
    ),
    "tp2-eagle-0.5.23": _s(
        "--model-path", "Qwen/Qwen3-8B", "--tp", "2", "--speculative-algorithm", "EAGLE",
        "--speculative-draft-model-path", "AngelSlim/Qwen3-8B_eagle3",
        "--cuda-graph-max-bs-decode", "32", "--sim-format", "0.5.23",
    ),
    "vl-piecewise-0.5": _s(
        "--model-path", "Qwen/Qwen3-VL-8B-Instruct", "--enable-piecewise-cuda-graph",
        "--cuda-graph-max-bs", "16",
    ),
    "vl-0.5.23": _s(
        "--model-path", "Qwen/Qwen3-VL-8B-Instruct", "--cuda-graph-max-bs-decode", "16",
        "--sim-format", "0.5.23",
    ),
    "vl-0.4": _s("--model-path", "google/gemma-3-12b-it", "--sim-format", "0.4"),
    "oom-capture-0.5": _s(
        "--model-path", "Qwen/Qwen3.6-27B", "--tp", "2", "--enforce-piecewise-cuda-graph",
        "--mem-fraction-static", "0.98", serve=False,
    ),
    "oom-capture-0.5.23": _s(
        "--model-path", "Qwen/Qwen3-8B", "--mem-fraction-static", "0.985",
        "--sim-format", "0.5.23", serve=False,
    ),
    "kv-too-small-0.5.23": _s(
        "--model-path", "meta-llama/Llama-3.1-70B-Instruct", "--tp", "2",
        "--mem-fraction-static", "0.4", "--sim-format", "0.5.23", serve=False,
    ),
    "weights-too-big-0.4": _s(
        "--model-path", "meta-llama/Llama-3.1-70B-Instruct", "--sim-format", "0.4", serve=False
    ),
    "language-only": _s(
        "--model-path", "Qwen/Qwen3-VL-8B-Instruct", "--language-only", serve=False
    ),
    "ambiguous-flag-0.5.23": _s(
        "--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16", "--sim-format", "0.5.23",
        serve=False,
    ),
}  # fmt: skip


def run_all(scenarios: dict[str, Scenario], folder: Path) -> dict[str, Result]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(run, s, folder / name) for name, s in scenarios.items()}
        return {name: f.result() for name, f in futures.items()}


def run(scenario: Scenario, folder: Path) -> Result:
    folder.mkdir(parents=True)
    sim = Sim(list(scenario.args), folder, sim_env(folder / "gpu-state"), scenario.entry)
    try:
        info = None
        if _ready_or_exit(sim) and scenario.serve:
            status, _ = sim.post(
                "/generate",
                {"text": "Once upon a time", "sampling_params": {"max_new_tokens": 200}},
            )
            assert status == 200
            status, body = sim.get("/server_info")
            info = json.loads(body)
            chat = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
            events = sim.stream("/v1/chat/completions", {**chat, "max_tokens": 3000})
            next(events)
            sim.signal(signal.SIGTERM)
            assert list(events)[-1] == "[DONE]"
        code = sim.wait_exit(60)
        left = sorted(p.name for p in (folder / "gpu-state").glob("*"))
        return Result(sim.log(), code, sim.summary(), info, left)
    finally:
        sim.close()


def _ready_or_exit(sim: Sim, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if READY in sim.log():
            return True
        if sim.proc.poll() is not None:
            return False
        time.sleep(0.02)
    raise AssertionError(f"neither ready nor exited within {timeout} s")
