"""The simulated server's HTTP side: health, info, metrics, generation, streaming."""

import http.client
import itertools
import json
import re
import signal
import subprocess
import sys

from tests.sim.simproc import HOST, READY, free_port, sim_env

FAST = ("--sim-speed", "300", "--sim-seed", "3")
SMALL = ("--model-path", "Qwen/Qwen3-0.6B", "--cuda-graph-max-bs", "8")


def test_health_is_503_until_the_warmup_request_succeeds(launch):
    # The first request compiles kernels for 400 simulated seconds: a 2 s window.
    sim = launch(*SMALL, "--sim-speed", "200", "--sim-warmup-seconds", "400")
    sim.wait_for(b"Uvicorn running on")
    assert sim.get("/health")[0] == 503
    assert sim.get("/v1/models")[0] == 200  # the API already answers
    sim.wait_ready()
    assert sim.get("/health") == (200, b"")
    assert sim.summary().state == "ready"


def test_info_endpoints(launch):
    sim = launch(*SMALL, "--tp", "2", *FAST)
    sim.wait_ready()
    status, body = sim.get("/v1/models")
    assert status == 200
    (model,) = json.loads(body)["data"]
    assert (model["id"], model["owned_by"], model["max_model_len"]) == (
        "Qwen/Qwen3-0.6B",
        "sglang",
        40960,
    )
    info = json.loads(sim.get("/server_info")[1])
    assert (info["tp_size"], info["port"], info["host"]) == (2, sim.port, HOST)
    assert info["cuda_graph_max_bs"] == 8 and "launch_command" in info
    model_info = json.loads(sim.get("/model_info")[1])
    assert model_info["architectures"] == ["Qwen3ForCausalLM"]
    assert sim.get("/get_model_info")[0] == 200
    assert b"Endpoint '/get_model_info' is deprecated" in sim.log()
    assert sim.get("/metrics")[0] == 404  # only with --enable-metrics
    assert sim.get("/nope")[0] == 404
    assert sim.request("POST", "/health")[0] == 405
    assert b'"GET /v1/models HTTP/1.1" 200 OK' in sim.log()
    assert b'"GET /metrics HTTP/1.1" 404 Not Found' in sim.log()


def test_generate_and_openai_endpoints_with_streaming(launch):
    sim = launch(*SMALL, *FAST)
    sim.wait_ready()
    status, doc = sim.post(
        "/generate", {"text": "Hello", "sampling_params": {"max_new_tokens": 50}}
    )
    assert status == 200
    assert doc["meta_info"]["completion_tokens"] == 50
    assert doc["meta_info"]["finish_reason"] == {"type": "length", "length": 50}
    assert len(doc["text"].split()) == 50

    body = {"text": "Hello", "sampling_params": {"max_new_tokens": 120}, "stream": True}
    events = list(sim.stream("/generate", body))
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    texts = [c["text"] for c in chunks]
    assert all(b.startswith(a) for a, b in itertools.pairwise(texts))  # cumulative
    assert chunks[-1]["meta_info"]["completion_tokens"] == 120

    chat = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 30}
    status, doc = sim.post("/v1/chat/completions", chat)
    assert doc["object"] == "chat.completion"
    assert doc["choices"][0]["finish_reason"] == "length"
    assert doc["usage"]["completion_tokens"] == 30
    stream = {**chat, "stream": True, "stream_options": {"include_usage": True}}
    chunks = [json.loads(e) for e in list(sim.stream("/v1/chat/completions", stream))[:-1]]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-2]["choices"][0]["finish_reason"] == "length"
    assert chunks[-1]["usage"]["completion_tokens"] == 30 and chunks[-1]["choices"] == []

    status, doc = sim.post("/v1/completions", {"prompt": "Hi", "max_tokens": 5})
    assert doc["object"] == "text_completion" and doc["usage"]["completion_tokens"] == 5

    s = sim.summary()
    assert s.state == "serving" and s.throughput.samples >= 3
    assert b"Prefill batch, #new-seq: 1, #new-token: 2, " in sim.log()
    assert b'"POST /v1/chat/completions HTTP/1.1" 200 OK' in sim.log()


def test_sim_tok_s_sets_the_single_request_rate(launch):
    sim = launch(*SMALL, *FAST, "--sim-tok-s", "40")
    sim.wait_ready()
    sim.post("/generate", {"text": "Hi", "sampling_params": {"max_new_tokens": 400}})
    t = sim.summary().throughput
    assert t.samples >= 9
    assert 36 < t.gen_tok_s_median < 44


def test_metrics_page(launch):
    sim = launch(*SMALL, *FAST, "--enable-metrics", "--speculative-algorithm", "NGRAM")
    sim.wait_ready()
    sim.post("/generate", {"text": "Hi", "sampling_params": {"max_new_tokens": 100}})
    status, body = sim.get("/metrics")
    assert status == 200
    text = body.decode()
    values = {
        line.split("{")[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }
    assert values["sglang:generation_tokens_total"] >= 108  # warmup 8 + 100
    assert values["sglang:num_running_reqs"] == 0
    assert values["sglang:gen_throughput"] > 0
    assert 1 < values["sglang:spec_accept_length"] < 4
    assert values["sglang:time_to_first_token_seconds_count"] >= 2
    assert values["sglang:inter_token_latency_seconds_count"] >= 100
    assert "# TYPE sglang:time_to_first_token_seconds histogram" in text
    assert 'model_name="Qwen/Qwen3-0.6B"' in text


def test_access_lines_go_to_stdout_and_the_log_to_stderr(tmp_path):
    port = free_port()
    cmd = [sys.executable, "-m", "sgwatch.sim", *SMALL, *FAST, "--skip-server-warmup"]
    cmd += ["--host", HOST, "--port", str(port)]
    with subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=sim_env(tmp_path / "gpu"),
        start_new_session=True,
    ) as proc:
        early = b""
        for line in proc.stderr:
            early += line
            if READY in line:
                break
        conn = http.client.HTTPConnection(HOST, port, timeout=10)
        conn.request("GET", "/health")
        assert conn.getresponse().status == 200
        conn.close()
        proc.terminate()  # no generate request yet, so SIGTERM's default action
        out, rest = proc.communicate(timeout=10)
    err = early + rest
    assert proc.returncode == -signal.SIGTERM
    access = rb'\[[\d: -]+\] INFO:     127\.0\.0\.1:\d+ - "GET /health HTTP/1\.1" 200 OK\n'
    assert re.fullmatch(access, out)
    assert b"Uvicorn running on" in err and b"GET /health" not in err
