"""Every real SGLang log in the corpus reads as a person reads it (expectations.py)."""

import os
from pathlib import Path

import pytest

from sgwatch.cli.replay import read_log
from sgwatch.core.ratecounts import MEDIAN_ERROR
from tests.corpus.expectations import E


def test_every_sglang_log_has_an_expectation(corpus):
    names = {p.name for p in corpus.glob("sglang-*.log")}
    assert names, "no sglang-*.log files in the corpus"
    assert sorted(names - E.keys()) == [], "logs without an expectation row"
    assert sorted(E.keys() - names) == [], "expectation rows without a log"


@pytest.mark.parametrize("name", sorted(E))
def test_sglang_log(corpus, name):
    with open(corpus / name, "rb") as f:
        s = read_log(f)
    want = E[name]
    assert s.engine == "sglang"
    assert (s.state, s.ready) == (want["state"], want["ready"])
    got = [(c.kind, c.done, c.total, c.ended) for c in s.graph_captures]
    assert got == want["captures"]
    if "capture_seconds" in want:
        assert [c.seconds for c in s.graph_captures] == pytest.approx(want["capture_seconds"])
    if want["crash"] is None:
        assert s.crash is None
    else:
        assert s.crash is not None
        for word in want["crash"]:
            assert word in s.crash.summary
        assert "\n" not in s.crash.summary
    if "exit_code" in want:
        assert s.crash.exit_code == want["exit_code"]
    if "tput" in want:
        t = s.throughput
        *exact, median = want["tput"]  # the exact median; counted in 0.1 tok/s buckets
        assert (t.samples, t.gen_tok_s_last, t.gen_tok_s_max) == pytest.approx(tuple(exact))
        assert t.gen_tok_s_median == pytest.approx(median, abs=MEDIAN_ERROR + 1e-9)
    if "accept" in want:
        assert s.throughput.accept_len_mean == pytest.approx(want["accept"])
    if "weights" in want:
        assert (s.weights.done, s.weights.total) == want["weights"]
    assert s.model == want.get("model")
    if "weights_seconds" in want:
        assert s.weights.seconds == pytest.approx(want["weights_seconds"])


@pytest.mark.parametrize(
    "name",
    sorted(
        p.name
        for p in Path(os.environ.get("SGWATCH_LOG_CORPUS", "/nonexistent")).glob("vllm-*.log")
    )
    or ["(none)"],
)
def test_vllm_logs_are_recognised_and_never_break_replay(corpus, name):
    # The vLLM parser comes later; until then replay must name the engine and not fail.
    path = corpus / name
    if name == "(none)":
        pytest.fail(f"no vllm-*.log files in {path.parent}")
    with open(path, "rb") as f:
        s = read_log(f)
    assert s.engine == "vllm"
    assert s.lines > 0
