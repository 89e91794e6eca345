"""A line whose first characters were lost still reads as SGLang's record: its ranks
and message (its stamp is no time); a crash is still a crash. Lines that only look
a little like a prefix stay plain lines."""

import io

import pytest

from sgwatch.cli.replay import read_log
from sgwatch.engines.sglang.parse import Parser
from sgwatch.engines.sglang.prefix import split_cut_prefix

FULL = "[2026-01-10 08:00:00.120 DP1 TP3] "
MESSAGE = "Scheduler hit an exception: Traceback (most recent call last):"


@pytest.mark.parametrize("lost", range(1, FULL.index(":") + 1))
def test_each_cut_of_the_stamp_keeps_the_ranks_and_message(lost):
    assert split_cut_prefix(FULL[lost:] + MESSAGE) == ("DP1 TP3", MESSAGE)


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("-10 08:00:00] Load weight begin. avail mem=70.00 GB", None),  # no rank tags
        ("2:30:32 TP0] Init nccl begin.", "TP0"),  # 0.3's time-only stamp, cut
        ("DP1 TP3] Scheduler hit an exception: x", "DP1 TP3"),  # only the ranks left
    ],
)
def test_other_cuts(line, found):
    cut = split_cut_prefix(line)
    assert cut is not None and cut[0] == found


@pytest.mark.parametrize(
    "line",
    [
        "00 TP1] too little of the stamp to tell",
        "4 11:43:54 [core.py:76] a vLLM line cut",
        "11:43:54 file.py:123] vLLM V0's stamp, cut",
        "03-14 10:00:00 [__init__.py:190] Automatically detected platform cuda.",
        "TP3]no space after the bracket",
        "{'tp_size': 8, 'pp': 2] x",
        '  File "/x.py", line 3, in f] x',
        " 35%|███▌      | 18/51 [00:01<00:02, 12.00it/s] x",
    ],
)
def test_lines_that_are_no_cut_record(line):
    assert split_cut_prefix(line) is None


@pytest.mark.parametrize("lost", [1, 3, 11, 13])
def test_a_cut_crash_line_is_still_a_crash(lost):
    log = "\n".join(
        [
            "[2026-01-10 07:59:50 DP1 TP3] Load weight begin. avail mem=70.00 GB",
            FULL[lost:] + MESSAGE,
            '  File "/opt/python/sglang/srt/model_executor/model_runner.py", line 9, in load_model',
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        ]
    )
    s = read_log(io.BytesIO(log.encode() + b"\n"))
    assert s.state == "crashed"
    assert s.crash.summary.startswith("torch.OutOfMemoryError: CUDA out of memory")
    assert s.crash.phase == "loading_weights"


def test_a_cut_record_has_no_time_and_keeps_the_clock():
    p = Parser()
    p.parse("[2026-01-10 08:00:00 TP0] Capture cuda graph begin. avail mem=9.00 GB")
    event = p.parse("6-01-10 08:00:09 TP0] Capture cuda graph end. Time elapsed: 9.00 s")
    assert (event.kind, event.ts, event.rank, event.elapsed_s) == ("decode", None, "TP0", 9.0)
    bar = p.parse("Capturing batches (bs=1 avail_mem=9.00 GB): 100%|██| 4/4 [00:09<00:00]")
    assert bar.after == "2026-01-10 08:00:00"  # placed after the last whole stamp
