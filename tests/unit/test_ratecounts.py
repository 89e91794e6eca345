"""A run's tok/s median within its stated error, in memory that does not grow
with the number of samples."""

import random
import statistics
import tracemalloc

import pytest

from sgwatch.core.ratecounts import MEDIAN_ERROR, RateCounts

TOLERANCE = MEDIAN_ERROR + 1e-9  # the stated error, plus float rounding


def add_texts(counts: RateCounts, texts: list[str]) -> None:
    """Rates as SGLang prints them (two decimals), as the bulk path hands them over."""
    counts.add_buckets([t[:-1] for t in texts], lambda b: [t for t in texts if t[:-1] == b])


@pytest.mark.parametrize("seed", range(20))
def test_median_within_the_stated_error_and_max_exact(seed):
    rnd = random.Random(seed)
    mean, spread = rnd.uniform(5, 3000), rnd.uniform(0.01, 400)
    texts = [f"{max(0.0, rnd.gauss(mean, spread)):.2f}" for _ in range(rnd.randint(1, 3000))]
    counts, values = RateCounts(), list(map(float, texts))
    half = len(texts) // 2  # as printed, in runs (bulk reading), and one by one
    for i in range(0, half, 500):
        add_texts(counts, texts[i : min(i + 500, half)])
    for v in values[half:]:
        counts.add(v)
    assert counts.median() == pytest.approx(statistics.median(values), abs=TOLERANCE)
    assert counts.max() == max(values)


def test_no_samples_no_median():
    assert RateCounts().median() is None and RateCounts().max() is None


def test_a_rate_on_a_bucket_edge_reads_the_same_as_text_and_as_a_number():
    as_text, as_number = RateCounts(), RateCounts()
    edges = [f"{tenths / 10:.2f}" for tenths in range(0, 30_001, 7)]  # "0.00", "0.70", ...
    add_texts(as_text, edges)
    for text in edges:
        as_number.add(float(text))
    # Every rate on its bucket's lower edge: the middles read 0.05 above.
    exact = statistics.median(map(float, edges))
    assert as_text.median() == as_number.median() == pytest.approx(exact + 0.05)


def test_memory_stays_bounded_for_a_million_samples():
    """Every rate from 50 to 3,000 tok/s SGLang can print (295,001 values), in
    random order: counting each value would hold ~3x more after a million
    samples than after 100,000."""
    rates = [f"{cents / 100:.2f}" for cents in range(5_000, 300_001)]
    random.Random(7).shuffle(rates)

    def retained(n_samples: int) -> int:
        tracemalloc.start()
        try:
            counts = RateCounts()
            for i in range(0, n_samples, 10_000):
                start = i % len(rates)
                add_texts(counts, rates[start : start + 10_000])
                if i % 100_000 == 0:
                    counts.median()  # as the dashboard reads it while the log streams
            assert counts.median() is not None
            return tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()

    small, large = retained(100_000), retained(1_000_000)
    assert large < 4 * 2**20  # 29,500 buckets of 0.1 tok/s at most
    assert large < 1.2 * small  # set by the range of the rates, not their number
