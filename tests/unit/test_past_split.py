"""A long log's past read in two parts at once (the later part by a fresh ingest)
and joined must leave the state exactly as reading it whole, whenever the join says
it is exact; and it must say so where it matters, before serving lines."""

from importlib.resources import files

from hypothesis import given, settings

from sgwatch.engines import by_name
from sgwatch.live.ingest import LogIngest
from tests.unit.test_parse_bulk import LINES, VLLM_LINES, seen

FIXTURES = files("tests") / "fixtures"
SGLANG_START = (FIXTURES / "sglang" / "new_phases_0_5_23.log").read_text().splitlines()
VLLM_START = (FIXTURES / "vllm" / "v1_startup_serving.log").read_text().splitlines()


def whole(data: bytes) -> LogIngest:
    ingest = LogIngest()
    ingest.feed(data)
    return ingest


def in_two(data: bytes, cut: int, engine: str) -> tuple[LogIngest, bool]:
    first, later = LogIngest(), LogIngest(engine=engine)
    first.feed(data[:cut])
    later.feed(data[cut:])
    return first, first.extend(later)


def view(ingest: LogIngest) -> tuple:
    s = ingest.state
    return (*seen(s), s.lines, s.runs, s.engine, s.last_ts)


def check_every_cut(lines: list[str], engine: str, most: int | None = None) -> list[int]:
    """Cut before each timestamped line (`most`: before that many, spread over the log);
    returns the indices of the lines before which the join was exact."""
    data = "".join(f"{line}\n" for line in lines).encode()
    expected = view(whole(data))
    every = max(1, len(lines) // most) if most else 1
    joined: list[int] = []
    at = 0
    for i, line in enumerate(lines):
        found = by_name(engine).split_prefix(line) if i % every == 0 else None
        if at and found is not None and found[0]:
            first, exact = in_two(data, at, engine)
            if exact:
                joined.append(i)
                assert view(first) == expected, f"cut before {line!r}"
        at += len(line.encode()) + 1
    return joined


def decode(i: int) -> str:
    return (
        f"[2026-11-30 11:{i // 60 % 60:02d}:{i % 60:02d} TP0] Decode batch, #running-req: 1, "
        f"#token: 90, token usage: 0.01, cuda graph: True, "
        f"gen throughput (token/s): {60 + i % 7}.{i % 100:02d}, #queue-req: 0"
    )


# The generated lines may leave a traceback open; its exception line closes it, so
# the serving lines after it must join at every cut whatever came before.
SGLANG_CLOSE = "RuntimeError: CUDA error: an illegal memory access was encountered"
SGLANG_TAIL = [decode(i) for i in range(5)]
VLLM_TAIL = [x for x in VLLM_START if "Avg generation" in x]


@settings(max_examples=150, deadline=None)
@given(LINES)
def test_sglang_past_in_two_parts_equals_the_whole(lines):
    log = [*SGLANG_START[-40:], *lines, SGLANG_CLOSE, *SGLANG_TAIL]
    tail = range(len(log) - len(SGLANG_TAIL), len(log))
    assert set(tail) <= set(check_every_cut(log, "sglang"))


@settings(max_examples=150, deadline=None)
@given(VLLM_LINES)
def test_vllm_past_in_two_parts_equals_the_whole(lines):
    log = [*VLLM_START, *lines, *VLLM_TAIL]
    tail = range(len(log) - len(VLLM_TAIL), len(log))
    assert len(VLLM_TAIL) >= 3
    assert set(tail) <= set(check_every_cut(log, "vllm"))


def test_a_serving_log_joins_at_every_cut_in_its_serving_lines():
    serving = [decode(i) for i in range(3000)]
    assert len(check_every_cut(SGLANG_START + serving, "sglang")) >= 3000


def test_a_vllm_serving_log_joins_in_its_serving_lines():
    serving = [x for x in VLLM_START if "Avg generation" in x or "INFO:     127" in x]
    assert len(check_every_cut(VLLM_START + serving * 20, "vllm")) >= 20


def test_no_join_inside_a_traceback_or_over_a_crash():
    serving = [decode(i) for i in range(50)]
    crash = [
        "[2026-11-30 11:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 1, in run',
    ]
    exc = "RuntimeError: CUDA error: an illegal memory access was encountered"
    open_tb = SGLANG_START + serving + crash
    data = "".join(f"{x}\n" for x in [*open_tb, *serving, exc]).encode()
    cut = len("".join(f"{x}\n" for x in open_tb).encode())
    first, exact = in_two(data, cut, "sglang")
    assert not exact  # the traceback is open at the cut: the later part must be read here
    first.feed(data[cut:])
    assert view(first) == view(whole(data)) and first.state.crash is not None

    data = "".join(f"{x}\n" for x in [*SGLANG_START, *serving, *crash, exc]).encode()
    cut = len("".join(f"{x}\n" for x in SGLANG_START + serving[:10]).encode())
    assert not in_two(data, cut, "sglang")[1]  # the later part holds a crash
