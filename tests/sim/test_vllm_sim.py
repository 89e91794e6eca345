"""The simulated `vllm serve` as a user meets it: its warmup read by sgwatch's own parser,
its endpoints, its throughput lines only while traffic flows, its signals and crashes."""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path

from sgwatch.engines.vllm.metrics import read_metrics
from tests.integration.helpers import wait_until

READY = b"Application startup complete."
MODEL = "Qwen/Qwen3-0.6B"
THROUGHPUT = b"Engine 000: Avg prompt throughput"
STATS = re.compile(rb"(INFO|DEBUG) \d\d-\d\d [\d:]+ \[loggers\.py:\d+\] " + THROUGHPUT + rb".*")


def until_gone(pids: list[int], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while any(Path(f"/proc/{p}").exists() for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def chat(sim, text: str, tokens: int) -> tuple[int, dict]:
    body = {"messages": [{"role": "user", "content": text}], "max_tokens": tokens}
    return sim.post("/v1/chat/completions", body)


def test_a_whole_warmup_reads_as_vllm_then_serves(launch, state_dir):
    sim = launch("vllm", "serve", MODEL, "--sim-speed", "60")
    sim.wait_for(READY, 60)
    s = sim.summary()
    assert (s.engine, s.version, s.state, s.ready) == ("vllm", "0.11.0", "ready", True)
    names = [p.name for p in s.phases]
    for phase in ("loading_weights", "compiling", "capturing_graphs"):
        assert phase in names, names
    captures = {(c.kind, c.done, c.total) for c in s.graph_captures}
    # the H100 default: 1, 2, 4, then every 8 up to 512, mixed batches and decode alike
    assert captures == {("piecewise", 67, 67), ("decode", 67, 67)}, captures
    status, models = sim.get("/v1/models")
    model = json.loads(models)["data"][0]
    assert (status, model["id"], model["owned_by"]) == (200, MODEL, "vllm")
    assert json.loads(sim.get("/version")[1]) == {"version": "0.11.0"}
    assert sim.get("/health")[0] == 200
    assert sim.get("/generate")[0] == 404  # SGLang's native endpoint is not vLLM's


def test_chat_streams_and_metrics_count_it(launch):
    sim = launch("vllm", "serve", MODEL, "--sim-speed", "60", "--sim-tok-s", "200")
    sim.wait_for(READY, 60)
    before = read_metrics(sim.get("/metrics")[1].decode())
    body = {"messages": [{"role": "user", "content": "count to ten"}], "max_tokens": 40}
    chunks = list(sim.stream("/v1/chat/completions", {**body, "stream": True}))
    assert chunks[-1] == "[DONE]"
    words = [json.loads(c)["choices"][0]["delta"].get("content", "") for c in chunks[:-1]]
    assert len("".join(words).split()) == 40
    page = sim.get("/metrics")[1].decode()
    for name in ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc"):
        assert f"\nvllm:{name}{{" in page
    after = read_metrics(page)
    assert after.generation_tokens - before.generation_tokens == 40
    assert after.prompt_tokens > before.prompt_tokens
    assert after.ttft.count == before.ttft.count + 1
    assert after.itl.count - before.itl.count == 39  # the gaps between 40 tokens
    assert after.accept_length is None  # no speculative decoding


def stats_lines(sim) -> list[tuple[bytes, bytes]]:
    """(level, line) of every throughput line so far, in order."""
    return [(m[1], m[0]) for m in STATS.finditer(sim.log())]


def test_throughput_lines_only_while_traffic_flows(launch):
    # 10 simulated seconds per stats interval: 0.1 s of wall time at speed 100. At DEBUG
    # the idle intervals log their line too: each one passing is seen, not slept through.
    debug = {"VLLM_LOGGING_LEVEL": "DEBUG"}
    args = ("vllm", "serve", MODEL, "--sim-speed", "100", "--sim-tok-s", "100")
    sim = launch(*args, env=debug)
    sim.wait_for(READY, 60)
    assert wait_until(lambda: len(stats_lines(sim)) >= 3)  # three idle intervals
    assert {level for level, _ in stats_lines(sim)} == {b"DEBUG"}  # idle: none at INFO
    assert chat(sim, "write a poem", 1500)[0] == 200  # 15 simulated seconds of decode
    assert wait_until(lambda: b"INFO" in {level for level, _ in stats_lines(sim)})
    busy = [line for level, line in stats_lines(sim) if level == b"INFO"]
    assert any(b"Avg generation throughput: 0.0" not in line for line in busy)

    def idle_again() -> bool:  # three DEBUG lines after the last INFO one
        levels = [level for level, _ in stats_lines(sim)]
        return levels[::-1].index(b"INFO") >= 3

    assert wait_until(idle_again)
    last = [line for level, line in stats_lines(sim) if level == b"INFO"][-1]
    assert b"Avg generation throughput: 0.0 tokens/s, Running: 0 reqs" in last


def test_speculative_decoding_reports_acceptance(launch):
    spec = '{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", '
    spec += '"num_speculative_tokens": 3}'
    sim = launch("vllm", "serve", MODEL, "--speculative-config", spec, "--sim-speed", "100")
    sim.wait_for(READY, 60)
    assert chat(sim, "explain", 600)[0] == 200
    sim.wait_for(b"SpecDecoding metrics: Mean acceptance length: ", 10)
    page = read_metrics(sim.get("/metrics")[1].decode())
    assert page.drafts and 1.0 < page.accept_length <= 4.0
    # FlashAttention (the H100 default) keeps full decode graphs with speculative decoding
    assert b"(decode, FULL)" in sim.log()


def test_flags_shape_the_warmup(launch):
    piecewise = launch(
        "vllm", "serve", MODEL, "--compilation-config.cudagraph_mode=PIECEWISE",
        "--cuda-graph-sizes", "1", "2", "4", "8", "--sim-speed", "60",
    )  # fmt: skip
    eager = launch("vllm", "serve", MODEL, "--enforce-eager", "--sim-speed", "60")
    piecewise.wait_for(READY, 60)
    eager.wait_for(READY, 60)
    captures = {(c.kind, c.done, c.total) for c in piecewise.summary().graph_captures}
    assert captures == {("piecewise", 4, 4)}
    log = eager.log()
    assert b"Capturing CUDA graphs" not in log and b"torch.compile" not in log
    assert b"'enforce_eager': True" in log  # non-default args says what was asked


def tagged_pids(log: bytes, name: str) -> set[int]:
    return {int(p) for p in re.findall(rb"\(" + name.encode() + rb" pid=(\d+)\)", log)}


def test_sigterm_shuts_down_and_frees_the_gpus(launch, state_dir):
    sim = launch("vllm", "serve", MODEL, "-tp", "2", "--sim-speed", "60")
    sim.wait_for(READY, 60)
    assert list(state_dir.glob("*.json"))  # the nvidia-smi stand-in sees its memory
    # the log's process tags are the server's children, titled as vLLM titles them
    (core,) = tagged_pids(sim.log(), "EngineCore_DP0")
    workers = [min(tagged_pids(sim.log(), f"Worker_TP{r}")) for r in range(2)]
    titles = {core: "VLLM::EngineCor", workers[0]: "VLLM::Worker_TP", workers[1]: "VLLM::Worker_TP"}
    for pid, title in titles.items():  # /proc/PID/comm keeps 15 characters
        assert Path(f"/proc/{pid}/comm").read_text().strip() == title
    sim.signal(signal.SIGTERM)
    assert sim.wait_exit(30) == 0
    assert until_gone([core, *workers])
    tail = sim.log().decode().splitlines()[-4:]
    assert tail[0].endswith("Shutting down FastAPI HTTP server.")
    assert [t.split("INFO:     ")[-1] for t in tail[1:]] == [
        "Shutting down",
        "Waiting for application shutdown.",
        "Application shutdown complete.",
    ]
    assert sim.summary().state == "stopped"
    assert list(state_dir.glob("*.json")) == []


def test_sigterm_during_startup_ends_it(launch):
    sim = launch("vllm", "serve", MODEL, "--sim-speed", "2")
    sim.wait_for(b"non-default args", 30)
    sim.signal(signal.SIGTERM)
    assert sim.wait_exit(30) == -signal.SIGTERM
    # as vLLM's start-up SIGTERM handler ends its log (a pod's probe kill looks so)
    assert sim.log().decode().splitlines()[-1].endswith("KeyboardInterrupt: terminated")


def test_out_of_memory_at_capture_with_a_high_memory_utilization(launch, state_dir):
    sim = launch("vllm", "serve", MODEL, "--gpu-memory-utilization", "0.98", "--sim-speed", "60")
    assert sim.wait_exit(60) == 1
    s = sim.summary()
    assert s.state == "crashed"
    assert s.crash is not None and "CUDA out of memory" in s.crash.summary
    assert b"RuntimeError: Engine core initialization failed." in sim.log()
    assert list(state_dir.glob("*.json")) == []


def test_an_unknown_flag_is_refused_as_vllm_refuses_it(launch):
    sim = launch("vllm", "serve", MODEL, "--enable-piecewise-cuda-graph")
    assert sim.wait_exit(30) == 2
    assert sim.log().decode().splitlines() == [
        "usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ...",
        "vllm: error: unrecognized arguments: --enable-piecewise-cuda-graph",
    ]
    fine = launch("vllm", "serve", MODEL, "--enable_expert_parallel", "--sim-speed", "60")
    fine.wait_for(READY, 60)  # a real vLLM flag, underscores and all
    assert b"'enable_expert_parallel': True" in fine.log()
