"""The batch-1 rate behind the roofline line: the bench's when there is one, else the log's."""

from __future__ import annotations

import pytest

from sgwatch.control.batch1 import Batch1Samples, batch1_roofline
from sgwatch.core.gpu_history import GpuHistory
from sgwatch.core.roofline import GB, GIB
from sgwatch.live.watch import Watch

WEIGHTS = (
    b"[2026-01-01 10:00:00 TP0] Load weight end. type=Q, avail mem=50 GB, mem usage=25.00 GB.\n"
)


def decode(running: int, tok_s: float, second: int) -> bytes:
    return (
        f"[2026-01-01 10:00:{second:02d} TP0] Decode batch, #running-req: {running}, "
        f"#token: 10, token usage: 0.00, cuda graph: True, gen throughput (token/s): {tok_s:.2f}, "
        "#queue-req: 0\n"
    ).encode()


def gpus(name: str = "NVIDIA H100 80GB HBM3") -> GpuHistory:
    g = GpuHistory()
    g.add_line(f"0, {name}, 50, 1000, 81559, 300, 40")
    return g


def test_only_lines_at_one_running_request_count_each_seen_once():
    w, samples = Watch("h"), Batch1Samples()
    w.feed(WEIGHTS)
    for second, (running, rate) in enumerate([(1, 60.0), (2, 110.0), (1, 62.0), (1, 64.0)]):
        w.feed(decode(running, rate, second))
        samples.observe(w.state)
        samples.observe(w.state)  # the same line on the next frame is not a new sample
    assert list(samples.values) == [60.0, 62.0, 64.0]
    assert samples.median == 62.0
    r, source = batch1_roofline(w.state, gpus(), samples, None, None, None)
    assert r.measured_tok_s == 62.0 and source == "median of 3 log lines at 1 running request"
    assert r.ceiling_tok_s == pytest.approx(3350 * GB / (25 * GIB))


def test_a_bench_takes_precedence_and_the_config_bandwidth_overrides_the_table():
    w, samples = Watch("h"), Batch1Samples()
    w.feed(WEIGHTS + decode(1, 60.0, 1))
    samples.observe(w.state)
    r, source = batch1_roofline(w.state, gpus("Mystery GPU"), samples, 70.0, 2.0, 1000.0)
    assert (r.measured_tok_s, source) == (70.0, "bench at concurrency 1")
    assert r.ceiling_tok_s == pytest.approx(2 * 1000 * GB / (25 * GIB))  # × accept length
    assert "config gpu_bandwidth_gbps" in r.assumptions and "accept length 2.00" in r.assumptions


def test_a_new_run_starts_the_samples_afresh():
    w, samples = Watch("h"), Batch1Samples()
    w.feed(decode(1, 60.0, 1))
    samples.observe(w.state)
    w.new_file("replaced")
    w.feed(decode(1, 90.0, 2))
    samples.observe(w.state)
    assert list(samples.values) == [90.0]
    r, source = batch1_roofline(w.state, GpuHistory(), Batch1Samples(), None, None, None)
    assert r.ceiling_tok_s is None and source == "" and "no GPU model known" in r.said()


def test_with_nextn_the_ceiling_stays_when_the_draft_loads_and_the_share_stays_plausible():
    """Qwen3.6-27B at TP 2 with NEXTN (3 steps): the draft's 0.76 GB load line used to
    replace the target's 25 GB, and the ceiling jumped to thousands of tok/s."""
    w, samples = Watch("h"), Batch1Samples()
    w.feed(
        b"[2026-01-01 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3.6-27B', "
        b"tp_size=2, speculative_algorithm='NEXTN', speculative_num_steps=3)\n"
        + b"".join(
            f"[2026-01-01 10:00:20 TP{r}] Load weight end. type=Qwen3_5ForConditionalGeneration"
            f", avail mem=53.4 GB, mem usage=25.15 GB.\n".encode()
            for r in (0, 1)
        )
    )
    before, _ = batch1_roofline(w.state, gpus(), samples, None, None, None)
    w.feed(
        b"".join(
            f"[2026-01-01 10:01:00 TP{r}] Load weight end. type=Qwen3_5ForCausalLMMTP"
            f", avail mem=10.9 GB, mem usage=0.76 GB.\n".encode()
            for r in (0, 1)
        )
    )
    after, _ = batch1_roofline(w.state, gpus(), samples, None, None, None)
    assert after.ceiling_tok_s == before.ceiling_tok_s == pytest.approx(3350 * GB / (25.15 * GIB))
    w.feed(
        b"[2026-01-01 10:02:00 TP0] Decode batch, #running-req: 1, #token: 10, token usage: 0.00,"
        b" accept len: 2.80, cuda graph: True, gen throughput (token/s): 113.60, #queue-req: 0\n"
    )
    samples.observe(w.state)
    r, _ = batch1_roofline(w.state, gpus(), samples, None, None, None)
    # Accept length 2.8 per step of 25.15 GiB (target) + 3 × 0.76 GiB (draft).
    assert r.ceiling_tok_s == pytest.approx(2.8 * 3350 * GB / ((25.15 + 3 * 0.76) * GIB))
    assert r.percent == pytest.approx(36, abs=1)
    assert "at accept length 2.80" in r.said()
