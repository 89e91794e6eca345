"""The bulk path (runs of serving lines folded into one event, batch lines
known by their shape) must leave the state exactly as reading each line on
its own would: same samples, rates, history, requests, log time, phases,
crash and badge. For both engines' parsers."""

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from sgwatch.core.state import ServerState
from sgwatch.engines.sglang.parse import Parser
from sgwatch.engines.vllm.parse import Parser as VllmParser

STAMPS = st.sampled_from(
    ["2026-11-30 10:00:00", "2026-11-30 10:00:01", "2026-11-30 10:00:01.250", "2026-11-30 23:59:59"]
)
RANKS = st.sampled_from(["", " TP0", " TP1", " DP1 TP3", " DP0 PP0 TP0 EP0 ATTN_CP0 MOE_DP0"])
# Rates that share a 0.1 tok/s bucket (the max within it is read from the text).
RATES = st.sampled_from(
    ["1234.56", "50.00", "2999.99", "1234.56", "1234.59", "1234.50", "2999.95", "18", "7.1"]
)
PATHS = st.sampled_from(["/v1/chat/completions", "/generate", "/health", "/health_generate"])


@st.composite
def decode(draw):
    label = draw(st.sampled_from(["Decode batch, ", "Decode batch. ", "Decode batch [12], "]))
    spec = draw(st.sampled_from(["", "accept len: 2.31, "]))
    tail = draw(st.sampled_from(["", ", #queue-req: 0", " cut"]))
    return (
        f"[{draw(STAMPS)}{draw(RANKS)}] {label}#running-req: 3, #token: 900, "
        f"token usage: 0.10, {spec}cuda graph: True, gen throughput (token/s): {draw(RATES)}{tail}"
    )


@st.composite
def prefill(draw):
    return (
        f"[{draw(STAMPS)}{draw(RANKS)}] Prefill batch, #new-seq: 1, #new-token: 64, "
        "#cached-token: 0, token usage: 0.10, #running-req: 2, #queue-req: 0"
    )


@st.composite
def access(draw):
    client = draw(st.sampled_from(["127.0.0.1:4242", "::1:4242", "[::1]:4242"]))
    return f'[{draw(STAMPS)}] INFO:     {client} - "GET {draw(PATHS)} HTTP/1.1" 200 OK'


OTHER = st.sampled_from(
    [
        "[2026-11-30 10:00:02 TP0] Load weight begin. avail mem=78.00 GB",
        "[2026-11-30 10:00:03] INFO:     Started server process [4242]",
        "[2026-11-30 10:00:03] INFO:     127.0.0.1:4242 - not an access line",
        '[2026-11-30 10:00:03] INFO:     localhost:4242 - "GET /generate HTTP/1.1" 200 OK',
        '[2026-11-30 10:00:03 TP0] INFO:     127.0.0.1:4242 - "GET /generate HTTP/1.1" 200 OK',
        # Not ASCII: left to the pure-Python paths, or read as text of one byte a character.
        "[2026-11-30 10:00:02 TP0] Decode batch, gen throughput (token/s): 5.00, note: é",
        "[2026-11-30 10:00:02 TP0] Decode batch, gen throughput (token/s): 6.00 ✓",
        "[2026-11-30 10:00:02 TP0] Decode batch, gen throughput (token/s): 1.234",
        "[2026-11-30 10:00:02 TP0] Decode batch, gen throughput (token/s): 7.00 "
        "gen throughput (token/s): 8.00",
        "[2026-11-30 10:00:02 TP0] Decode batch, gen throughput (token/s): 7.1, "
        "gen throughput (token/s): 8.00",
        "[2026-11-30 10:00:02 TP0] Decode batch, accept len: 1.5, accept len: 2.31, "
        "gen throughput (token/s): 9.00",
        "[2026-11-30 10:00:02 TP0] Decode batch, accept len: 2.50, accept len: 2.31, "
        "gen throughput (token/s): 9.50",
        "[2026-11-30 10:00:03] INFO:     Shutting down",
        "[2026-11-30 10:00:03] INFO:     Finished server process [4242]",
        "[2026-11-30 10:00:04] The server is fired up and ready to roll!",
        "[2026-11-30 10:00:05 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "(SGLangWorker pid=7) [2026-11-30 10:00:06 TP0] Decode batch, #running-req: 1, "
        "gen throughput (token/s): 77.70",
        # The shape of a batch line after a stamp that is not a stamp.
        "[1999-11-30 10:00:07 TP0] Decode batch, #running-req: 3, #token: 900, tok",
        "[2026-11-30 10:00:0x TP0] Decode batch, gen throughput (token/s): 1.00",
        "[2026-11-30 10:00:0\u0663 TP0] Decode batch, gen throughput (token/s): 4.00",  # ٣
        "[20:00:00.123456 TP1] Decode batch, gen throughput (token/s): 1.00",
        "[2026-11-30 10:00:00 tp0] Decode batch, gen throughput (token/s): 2.00",
        "[2026-11-30 10:00:00.1234567 TP0] Decode batch, gen throughput (token/s): 3.00",
        "[20xx-11-30 10:00:01] INFO:     1 Ā",
        '[2026-11-30 10:0x:01] INFO:     127.0.0.1:1 - "GET /generate HTTP/1.1" 200 OK',
        "X2026-11-30 10:00:07 TP0] Decode batch, #running-req: 3, #token: 900, tok",
        "garbage ] Decode batch",
        # An untimed bar frame: placed by the parser's clock (the last stamp it read).
        "Capturing batches (bs=8 avail_mem=7.69 GB):  50%|█████     | 18/36 "
        "[00:17<00:17,  1.03it/s]",
        "",
    ]
)
LINES = st.lists(st.one_of(decode(), decode(), prefill(), access(), OTHER), max_size=60)


# vLLM's API server under load: stats lines (one decimal; 0.0 is an idle window, no
# sample), SpecDecoding lines, uvicorn's access lines, each with its process tag.
VLLM_STAMPS = st.sampled_from(["11-30 10:00:00", "11-30 10:00:01", "11-30 23:59:59"])
VLLM_RATES = st.sampled_from(["1234.5", "1234.9", "50.0", "0.0", "2999.9", "41.25", "7"])


@st.composite
def vllm_stats(draw):
    return (
        f"(APIServer pid=3646) INFO {draw(VLLM_STAMPS)} [loggers.py:271] Engine 000: Avg prompt "
        f"throughput: 10.0 tokens/s, Avg generation throughput: {draw(VLLM_RATES)} tokens/s, "
        f"Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 4.5%"
        + draw(st.sampled_from(["", ", Prefix cache hit rate: 0.0%", " cut"]))
    )


@st.composite
def vllm_spec(draw):
    accept = draw(st.sampled_from(["2.31", "1.00"]))
    return (
        f"(APIServer pid=3646) INFO {draw(VLLM_STAMPS)} [metrics.py:96] SpecDecoding metrics: "
        f"Mean acceptance length: {accept}, Accepted throughput: 9.00 tokens/s"
    )


@st.composite
def vllm_access(draw):
    path = draw(st.sampled_from(["/v1/chat/completions", "/health", "/metrics", "/v1/models"]))
    return f'(APIServer pid=3646) INFO:     127.0.0.1:4242 - "GET {path} HTTP/1.1" 200 OK'


VLLM_OTHER = st.sampled_from(
    [
        "(APIServer pid=3646) INFO 11-30 10:00:02 [api_server.py:1] vLLM API server version 0.11.0",
        "(APIServer pid=3646) INFO:     Application startup complete.",
        # Lines that only look like serving lines.
        "(APIServer pid=3646) INFO:     127.0.0.1:4242 - not an access line HTTP/1.1",
        '(APIServer pid=3646) INFO 11-30 10:00:03 [x.py:1] a "GET /x HTTP/1.1" mention',
        "(APIServer pid=3646) INFO 11-30 10:00:03 [x.py:1] input throughput: 5.0 tokens/s",
        "(APIServer pid=3646) INFO 11-30 10:00:01 [metrics.py:96] SpecDecoding metrics: Mean "
        "acceptance length: 3, Accepted throughput: 9.00 tokens/s",
        "(APIServer pid=3646) ERROR 11-30 10:00:04 [core.py:1] EngineCore encountered a fatal "
        "error.",
        "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01,  1.00s/it]",
        "",
    ]
)
VLLM_LINES = st.lists(
    st.one_of(vllm_stats(), vllm_stats(), vllm_spec(), vllm_access(), VLLM_OTHER), max_size=60
)


def one_by_one(lines: list[str], parser_class: type = Parser) -> ServerState:
    state, parser = ServerState(), parser_class()
    for line in lines:
        if (event := parser.parse(line)) is not None:
            state.apply(event)
    return state


def in_blocks(lines: list[str], cuts: list[int], parser_class: type = Parser) -> ServerState:
    state, parser = ServerState(), parser_class()
    bounds = [0, *sorted(c % (len(lines) + 1) for c in cuts), len(lines)]
    for a, b in pairwise(bounds):
        for event in parser.parse_lines(lines[a:b]):
            state.apply(event)
    return state


def seen(s: ServerState) -> tuple:
    t, d = s.throughput, s.last_decode
    return (
        s.state,
        s.now_ts,
        [(p.name, p.started_at, p.ended_at) for p in s.phases],
        [(c.kind, c.done, c.total, c.bar_started_at) for c in s.captures],
        s.ready,
        s.crash and s.crash.summary,
        s.requests,
        t.samples,
        t.last,
        t.max,
        t.median,
        t.accept_len_mean and round(t.accept_len_mean, 9),  # sums in another order
        list(t.history),
        d and (d.ts, d.rank, d.gen_tok_s, d.fields),
    )


@settings(max_examples=400, deadline=None)
@given(LINES, st.lists(st.integers(0, 60), max_size=4))
def test_bulk_reading_equals_reading_line_by_line(lines, cuts):
    expected = seen(one_by_one(lines))
    assert seen(in_blocks(lines, cuts)) == expected


@settings(max_examples=400, deadline=None)
@given(VLLM_LINES, st.lists(st.integers(0, 60), max_size=4))
def test_vllm_bulk_reading_equals_reading_line_by_line(lines, cuts):
    expected = seen(one_by_one(lines, VllmParser))
    assert seen(in_blocks(lines, cuts, VllmParser)) == expected


def test_a_long_serving_block_counts_every_sample_and_keeps_the_newest():
    lines = [
        f"[2026-11-30 10:{i // 60 % 60:02d}:{i % 60:02d} TP0] Decode batch, #running-req: 1, "
        f"gen throughput (token/s): {100 + i % 7}.{i % 100:02d}"
        for i in range(10_000)
    ]
    bulk, single = in_blocks(lines, [2500, 7000]), one_by_one(lines)
    assert bulk.throughput.samples == 10_000
    assert seen(bulk) == seen(single)


def test_a_garbled_stamp_is_no_serving_line_and_never_the_clock():
    bar = "Capturing batches (bs=8 avail_mem=7.69 GB):  50%|#####     | 18/36 [00:17<00:17]"
    garbled = "[2026-11-30 10:00:0x TP0] Decode batch, gen throughput (token/s): 1.00"
    lines = ["[2026-11-30 10:00:00 TP0] Load weight begin.", garbled, bar]
    state = in_blocks(lines, [])
    assert state.throughput.samples == 0
    assert state.captures[-1].bar_started_at == "2026-11-30 10:00:00"


def test_a_time_only_stamp_that_starts_like_a_date_is_read_as_what_it_is():
    lines = ["[20:00:00.123456 TP1] Decode batch, gen throughput (token/s): 1.00"]
    state = in_blocks(lines, [])
    assert list(state.throughput.history) == [("20:00:00.123456", 1.0)]
