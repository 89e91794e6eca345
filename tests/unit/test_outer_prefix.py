"""Logs read through the tool that carried them: `docker logs -t`, `kubectl logs
--timestamps`, a node's CRI log files, journald's short formats in any locale, the
container names of `kubectl --prefix` and `docker compose`, stacked; both engines."""

# ruff: noqa: E501 (whole log lines)

import pytest

from sgwatch.engines import split_prefix
from sgwatch.engines.outerprefix import WITHIN, Unwrapper, strip
from sgwatch.live.ingest import LogIngest
from tests.replaylines import replay

VLLM_RUN = [
    "(APIServer pid=7) INFO 03-02 10:14:00 [api_server.py:1] vLLM API server version 0.11.0",
    "(EngineCore_DP0 pid=9) INFO 03-02 10:14:10 [default_loader.py:262] Loading weights took 5.10 seconds",
    "(EngineCore_DP0 pid=9) INFO 03-02 10:14:40 [backends.py:530] Dynamo bytecode transform time: 3.10 s",
    "(EngineCore_DP0 pid=9) INFO 03-02 10:14:50 [kv_cache_utils.py:1087] GPU KV cache size: 394,864 tokens",
    "(APIServer pid=7) INFO:     Application startup complete.",
    "(APIServer pid=7) INFO 03-02 10:15:07 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 "
    "tokens/s, Avg generation throughput: 88.4 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV "
    "cache usage: 0.3%, Prefix cache hit rate: 0.0%",
]  # fmt: skip
SGLANG_RUN = [
    "[2026-03-02 10:14:00] server_args=ServerArgs(model_path='m', tp_size=1)",
    "[2026-03-02 10:14:05] Load weight begin. avail mem=78.00 GB",
    "[2026-03-02 10:14:20] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=62.00 GB, mem usage=16.00 GB.",
    "[2026-03-02 10:14:30] The server is fired up and ready to roll!",
    "[2026-03-02 10:14:41] Decode batch, #running-req: 1, #token: 41, token usage: 0.00, cuda graph: True, gen throughput (token/s): 112.58, #queue-req: 0,",
]  # fmt: skip

PREFIXES = {
    "docker logs -t": "2026-03-02T10:14:07.118233001Z ",
    "kubectl --timestamps, offset": "2026-03-02T10:14:07.118+01:00 ",
    "CRI log file": "2026-03-02T10:14:07.118233001Z stdout F ",
    "journald, English": "Mar 02 10:14:07 gpu1 python3[4411]: ",
    "journald, French": "mars 02 10:14:07 gpu1 python3[4411]: ",
    "journald, French with a dot": "févr. 02 10:14:07 gpu1 python3[4411]: ",
    "journald, Russian": "мар 02 10:14:07 gpu1 python3[4411]: ",
    "journald, Japanese": " 3月 02 10:14:07 gpu1 python3[4411]: ",
    "journald, syslog day padding": "Mar  2 10:14:07 gpu1 vllm: ",
    "journald -o short-precise": "Mar 02 10:14:07.118233 gpu1 python3[4411]: ",
    "journald -o short-iso": "2026-03-02T10:14:07+0100 gpu1 python3[4411]: ",
    "kubectl --prefix": "[pod/vllm-0/vllm] ",
    "docker compose": "vllm-1  | ",
    "docker compose -t": "vllm-1  | 2026-03-02T10:14:07.118233001Z ",
    "a shipped journal": "2026-03-02T10:14:07.118Z Mar 02 10:14:07 gpu1 python3[4411]: ",
}


@pytest.mark.parametrize("prefix", PREFIXES.values(), ids=PREFIXES.keys())
@pytest.mark.parametrize("run", [VLLM_RUN, SGLANG_RUN], ids=["vllm", "sglang"])
def test_a_prefixed_log_reads_as_the_bare_one(prefix, run):
    bare = replay(run)
    prefixed = replay([prefix + line for line in run])
    assert prefixed.model_dump() == bare.model_dump()
    assert bare.state == "serving" and bare.throughput.samples == 1


def test_a_serving_vllm_log_behind_docker_stamps_is_serving_with_its_samples():
    s = replay(["2026-03-02T10:14:07.118233001Z " + VLLM_RUN[-1]])
    assert (s.engine, s.state, s.throughput.gen_tok_s_last) == ("vllm", "serving", 88.4)


@pytest.mark.parametrize("prefix", PREFIXES.values(), ids=PREFIXES.keys())
def test_the_registry_reads_each_engines_prefix_behind_them(prefix):
    assert split_prefix(prefix + VLLM_RUN[2])[:2] == ("10:14:40", "DP0")
    assert split_prefix(prefix + SGLANG_RUN[1])[:2] == ("2026-03-02 10:14:05", None)


@pytest.mark.parametrize(
    "line",
    [
        *VLLM_RUN,
        *SGLANG_RUN,
        "Capturing CUDA graphs (decode, FULL):  35%|███▌      | 18/51 [00:03<00:05,  5.70it/s]",
        "Loading safetensors checkpoint shards:  25% Completed | 1/4 [00:00<00:02,  1.02it/s]",
        "  0%|          | 0/4 [00:00<?, ?it/s]",
        "INFO 05-22 02:20:59 metrics.py:229] Avg prompt throughput: 0.0 tokens/s",
        "[22:30:32 TP0] Init nccl begin.",
        "26-01-10 08:00:00.120 DP1 TP3] Scheduler hit an exception: x",
        '  File "/usr/lib/python3/site-packages/vllm/worker.py", line 3, in f',
        "RuntimeError: CUDA error: out of memory",
    ],
)
def test_an_engines_own_line_keeps_every_character(line):
    assert strip(line) == line
    assert strip("2026-03-02T10:14:07Z " + line) == line


def test_a_records_own_words_after_a_stamp_stay():
    assert (
        strip("2026-03-02T10:14:07Z Worker failed: RuntimeError: x")
        == "Worker failed: RuntimeError: x"
    )


def test_the_unwrapper_tests_a_bare_stream_only_within_its_reach_then_each_blocks_start():
    unwrap = Unwrapper()
    bare = ["INFO 05-22 02:20:59 metrics.py:229] m"] * WITHIN
    assert unwrap.lines(bare) is bare  # nothing was stripped: the same list back
    late = ["x", "2026-03-02T10:14:07Z INFO 05-22 02:20:59 metrics.py:229] m"]
    assert unwrap.lines(late) is late  # past its reach, a block's later lines are not tested
    turned = ["2026-03-02T10:14:07Z INFO 05-22 02:20:59 metrics.py:229] m", "x"]
    assert unwrap.lines(turned) == ["INFO 05-22 02:20:59 metrics.py:229] m", "x"]
    assert unwrap.lines(late) == ["x", "INFO 05-22 02:20:59 metrics.py:229] m"]  # from then on


def test_the_log_pane_is_given_the_lines_as_written():
    shown = []
    ingest = LogIngest(on_lines=shown.extend)
    ingest.feed(("vllm-1  | " + VLLM_RUN[0] + "\n").encode())
    assert shown == ["vllm-1  | " + VLLM_RUN[0]]
    assert ingest.state.engine == "vllm"
