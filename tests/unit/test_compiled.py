"""The compiled fast paths give exactly what the pure-Python paths give:
the same lines from the same bytes, the same rates from the same lines, the
same median and max from the same samples."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sgwatch.core import compiled
from sgwatch.core.ratecounts import CentsCounts, TextCounts
from sgwatch.engines.sglang.parse import _ACCESS, _field_2dp_text
from tests.modes import needs_compiled, pure_python
from tests.unit.test_linesplit import split_all

pytestmark = needs_compiled


def test_the_install_built_them():
    # Skipped (so failed under CI=true) by the mark above when it did not.
    assert compiled.scan is not None


PLAIN = [
    "[2026-11-30 10:00:00 TP0] Decode batch, gen throughput (token/s): 12.34",
    "[2026-11-30 10:00:00] INFO:     127.0.0.1:4242 - ",
    "plain text ",
    "\t",
    "[12]",
    "[::1]",
    "\n",
    "\n",
    "L" * 30,
    # glued records, and what starts like one
    "x[2026-11-30 10:00:01] glued",
    "bar ]2026-11-30 10:00:01,123 - logging glued",
    "]2026",
    "[2026",
]
PIECES = st.sampled_from(
    [
        *PLAIN,
        "\r",
        "\r\n",
        "é",
        "✓",
        "\x1b[1m",
        "\x07",
        "\x7f",
        "\x9b",
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(PLAIN), max_size=60).map("".join)
    | st.lists(PIECES, max_size=60).map("".join),
    st.integers(1, 300) | st.integers(300, 5000),
    st.integers(8, 120) | st.just(64 * 1024),
    st.binary(max_size=3),
)
def test_the_same_bytes_give_the_same_lines(text, chunk, max_line, junk):
    data = text.encode() + (junk if "\r" in text else b"")
    fast = split_all(data, chunk=chunk, max_line=max_line)
    with pure_python():
        assert fast == split_all(data, chunk=chunk, max_line=max_line)


KEY = "gen throughput (token/s): "
FIELD_TEXT = st.lists(
    st.sampled_from(["1", "0", "9", ".", "12.34", ",", " ", "x", KEY, KEY[:5], "é"]), max_size=12
).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(FIELD_TEXT, max_size=20))
def test_the_same_lines_give_the_same_rates(lines):
    found = compiled.scan.fields_2dp(lines, KEY)
    if not all(line.isascii() for line in lines):
        assert found is None  # left to the pure-Python path
        return
    expected = [_field_2dp_text(line, KEY) for line in lines]
    fields, missing = found
    assert fields == [f for f in expected if f is not None]
    assert missing == [i for i, f in enumerate(expected) if f is None]


def parts(*options: str) -> st.SearchStrategy[str]:
    return st.sampled_from(options)


# An access line's parts, each right or wrong in some way.
ACCESS_TEXT = st.tuples(
    parts("127.0.0.1:42", "[::1]:42", "", "a\x1cb", "é"),
    parts(' - "', ' -"', '  - "'),
    parts("GET", "POST", "", "G-T", "_x1"),
    parts(" ", "  ", "\t"),
    parts("/v1/x", "/health", "", "/a\tb"),
    parts(" HTTP/", " HTTPS/", "HTTP/"),
    parts("1.1", "", "2", "1.x"),
    parts('" ', '"', " "),
    parts("200 OK", "20", "2000", "404", "x00"),
).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(ACCESS_TEXT, max_size=20), st.integers(0, 3))
def test_the_same_lines_give_the_same_access_paths(lines, at):
    found = compiled.scan.access_paths(lines, at)
    if not all(line.isascii() for line in lines):
        assert found is None
        return
    matches = [_ACCESS.match(line, at) for line in lines]
    assert found == ([m[3] for m in matches if m], [i for i, m in enumerate(matches) if not m])


def test_a_uvicorn_access_line_gives_its_path():
    line = '[2026-11-30 10:00:00] INFO:     127.0.0.1:4242 - "POST /v1/chat HTTP/1.1" 200 OK'
    assert compiled.scan.access_paths([line, line[:-8]], 32) == (["/v1/chat"], [1])


TEXTS = st.one_of(
    st.integers(0, 300_000).map(lambda c: f"{c // 100}.{c % 100:02d}"),
    st.sampled_from(["0.00", "007.50", "10737418.23", "10737418.24", "99999999999999999999.99"]),
)
VALUES = st.one_of(TEXTS.map(float), st.sampled_from([0.125, 1e300, math.inf, 5e-324, 10737418.24]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.lists(TEXTS, max_size=30), VALUES), max_size=12))
def test_the_same_samples_give_the_same_median_and_max(batches):
    fast, pure = CentsCounts(compiled.scan.Cents()), TextCounts()
    for batch in batches:
        for counts in (fast, pure):
            if isinstance(batch, list):
                counts.add_texts(batch)
            else:
                counts.add(batch)
    assert fast.max() == pure.max()
    assert fast.median() == pure.median()


def test_cents_count_far_more_samples_than_distinct_values():
    counts = compiled.scan.Cents()
    assert counts.add_texts(["2999.99", "50.00"] * 500_000 + ["x"]) == ["x"]
    assert (counts.total, counts.max) == (1_000_000, 299999)
    assert counts.select(499_999) == 5000 and counts.select(500_000) == 299999
    assert counts.items() == [(5000, 500_000), (299999, 500_000)]
    with pytest.raises(IndexError):
        counts.select(1_000_000)


def test_edge_arguments_are_refused_or_read_as_python_would():
    with pytest.raises(ValueError):
        compiled.scan.serving_run(["x"], -1, "")
    with pytest.raises(ValueError):
        compiled.scan.access_paths(["x"], -3)
    assert compiled.scan.plain_span(b"a\nb\nc", 2**70) == (1, ["b"], 3)
    assert compiled.scan.fields_2dp(["12.34 x", "x"], "") == (["12.34"], [1])  # as str.find("")
