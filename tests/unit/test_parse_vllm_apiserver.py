"""The API server's lines after the engine's handshake (vLLM's api_server.py and
launcher.py): `Supported tasks` comes once the engine core is up (its cache sized,
its graphs captured), then `Starting vLLM API server 0 on` (0.10, 0.11) or
`Starting vLLM server on` (2026 releases), `Available routes are:` and a `Route:`
line each; uvicorn's `Application startup complete.` is ready."""

# ruff: noqa: E501 (whole log lines)

import pytest

from tests.replaylines import replay

API = "(APIServer pid=8751) INFO 07-22 04:32:09"


@pytest.mark.parametrize(
    "line",
    [
        f"{API} [api_server.py:576] Supported tasks: ['generate']",
        f"{API} [api_server.py:1457] Starting vLLM API server 0 on http://0.0.0.0:8000",  # 0.10
        f"{API} [api_server.py:580] Starting vLLM server on http://0.0.0.0:8000",  # 2026
        f"{API} [launcher.py:37] Available routes are:",
        f"{API} [launcher.py:46] Route: /v1/chat/completions, Methods: POST",
        "INFO 12-11 08:10:36 launcher.py:27] Route: /v1/models, Methods: GET",  # V0, after its banner
    ],
)
def test_each_line_proves_the_engine_up_and_warming(line):
    banner = "INFO 12-11 08:10:00 api_server.py:1] vLLM API server version 0.6.4"
    s = replay([banner, line] if line.startswith("INFO") else [line])
    assert (s.engine, s.state) == ("vllm", "warming_up")


def test_an_excerpt_from_the_engines_last_lines_to_ready():
    s = replay(
        [
            "(EngineCore pid=8878) INFO 07-22 04:32:03 [gpu_model_runner.py:5746] Graph capturing finished in 8 secs, took 0.16 GiB",
            "(EngineCore pid=8878) INFO 07-22 04:32:03 [core.py:281] init engine (profile, create kv cache, warmup model) took 49.31 seconds",
            "(APIServer pid=8751) INFO 07-22 04:32:04 [api_server.py:576] Supported tasks: ['generate']",
            f"{API} [api_server.py:580] Starting vLLM server on http://0.0.0.0:8000",
            f"{API} [launcher.py:37] Available routes are:",
            f"{API} [launcher.py:46] Route: /openapi.json, Methods: GET, HEAD",
        ]
    )
    assert s.state == "warming_up"
    assert [p.name for p in s.phases][-2:] == ["capturing_graphs", "warming_up"]
    ready = replay(
        [
            f"{API} [launcher.py:46] Route: /v1/completions, Methods: POST",
            "(APIServer pid=8751) INFO:     Started server process [8751]",
            "(APIServer pid=8751) INFO:     Application startup complete.",
        ]
    )
    assert (ready.state, ready.ready_at) == ("ready", "04:32:09")
