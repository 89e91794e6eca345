"""Every real SGLang and vLLM log in the corpus reads as a person reads it (expectations.py)."""

from pathlib import Path

import pytest

from sgwatch.cli.replay import read_log
from sgwatch.core.ratecounts import MEDIAN_ERROR
from sgwatch.core.state import OVERRIDDEN, ServerState
from sgwatch.core.summary import Summary
from sgwatch.live.ingest import LogIngest
from tests.corpus.expectations import E, V
from tests.unit.test_past_split import check_every_cut


@pytest.mark.parametrize(("engine", "rows"), [("sglang", E), ("vllm", V)])
def test_every_log_has_an_expectation(corpus, engine, rows):
    names = {p.name for p in corpus.glob(f"{engine}-*.log")}
    assert names, f"no {engine}-*.log files in the corpus"
    assert sorted(names - rows.keys()) == [], "logs without an expectation row"
    assert sorted(rows.keys() - names) == [], "expectation rows without a log"


def test_the_optional_checks_have_rows_to_check():
    """The crash-phase checks below run only for the rows that name one: some must."""
    assert sum("crash_phase" in row for row in E.values()) >= 2
    assert sum("crash_phase" in row for row in V.values()) >= 1


@pytest.mark.parametrize("name", sorted(E))
def test_sglang_log(corpus, name):
    s = check(corpus / name, "sglang", E[name])
    if "crash_phase" in E[name]:
        assert s.crash.phase == E[name]["crash_phase"]


@pytest.mark.parametrize("name", sorted(V))
def test_vllm_log(corpus, name):
    s = check(corpus / name, "vllm", V[name])
    want = V[name]
    assert s.version == want.get("version")
    assert s.tp_size == want.get("tp_size")
    if "kv_tokens" in want:
        assert s.kv_cache_tokens == want["kv_tokens"]
    if "requests" in want:
        assert s.requests == want["requests"]
    if "crash_phase" in want:
        assert s.crash.phase == want["crash_phase"]
    if "overrides" in want:
        state = read_state(corpus / name)
        assert {k: state.args[k] for k in want["overrides"]} == want["overrides"]
        assert set(state.args[OVERRIDDEN]) == set(want["overrides"])
    else:
        assert OVERRIDDEN not in read_state(corpus / name).args


# How many of the 40 cuts joined exactly when these floors were set; the logs left
# out join at none (each cut leaves warmup or crash lines for the later part, or a
# traceback or capture open before it). Fewer joins means the past is read twice
# where it used to be joined.
JOINS = {
    "sglang-0.4.4-startup-nocudagraph-serving-cr-1.log": 8,
    "sglang-0.5.9-piecewise-compile-capture-cr-loglevel-warning-1.log": 1,
    "sglang-unknown-dp8-spec-mtp-serving-1.log": 5,
    "sglang-unknown-musa-dp2-tp2-startup-1.log": 10,
    "sglang-unknown-serving-decode-2.log": 9,
    "sglang-unknown-serving-decode-6.log": 4,
    "sglang-unknown-serving-decode-newfmt-1.log": 8,
    "sglang-unknown-serving-prefill-decode-newfmt-3.log": 10,
    "sglang-unknown-startup-serving-2.log": 4,
    "sglang-unknown-tp8-multinode-mtp-startup-1.log": 2,
    "vllm-0.10.2-tp8-ep-capture-ready-serving-4.log": 5,
    "vllm-0.10.2-tp8-ep-startup-launch-1.log": 10,
    "vllm-0.13.0-tp8-pd-crash-ansi-stripped-1.log": 4,
    "vllm-0.4.x-serving-stats-request-4.log": 1,
    "vllm-0.6.x-startup-kv-blocks-v0-6.log": 1,
    "vllm-0.8.x-tp2-crash-after-capture-workerproc-1.log": 1,
    "vllm-unknown-apiserver-serving-stats-2.log": 5,
    "vllm-unknown-tp2-spec-mtp-cudagraph-mode-1.log": 1,
    "vllm-unknown-tp2-torch-compile-aot-cache-1.log": 2,
}


def test_the_join_floors_name_corpus_logs():
    assert sorted(JOINS.keys() - E.keys() - V.keys()) == []


@pytest.mark.parametrize("name", sorted(E) + sorted(V))
def test_each_log_read_in_two_parts_equals_it_whole(corpus, name):
    """Cut before up to 40 of its timestamped lines: where the join says it is exact,
    it is (check_every_cut compares every state a person would see), and it says so
    at least as often as when the floor was set."""
    lines = (corpus / name).read_bytes().decode("utf-8", "replace").splitlines()
    joined = check_every_cut(lines, "vllm" if name.startswith("vllm-") else "sglang", most=40)
    assert len(joined) >= JOINS.get(name, 0)


def read_state(path: Path) -> ServerState:
    ingest = LogIngest()
    ingest.feed(path.read_bytes())
    ingest.flush()
    return ingest.state


def check(path: Path, engine: str, want: dict) -> Summary:
    with open(path, "rb") as f:
        s = read_log(f)
    assert s.engine == engine
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
    else:
        assert s.throughput.samples == 0
    if "accept" in want:
        assert s.throughput.accept_len_mean == pytest.approx(want["accept"])
    if "weights" in want:
        assert (s.weights.done, s.weights.total) == want["weights"]
    assert s.model == want.get("model")
    if "weights_seconds" in want:
        assert s.weights.seconds == pytest.approx(want["weights_seconds"])
    compiled = None if s.compile is None else (s.compile.cache, s.compile.seconds)
    assert compiled == want.get("compile")
    assert [c.effect for c in s.server_changes] == want.get("changes", [])
    return s
