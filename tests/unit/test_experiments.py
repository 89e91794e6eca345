"""The experiments table: rows from the history, diffs against a baseline, best, sort, export."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from sgwatch.control import experiments as ex
from sgwatch.control.bench_probe import BenchResult, PhaseResult, RequestResult
from sgwatch.control.flagedit import describe_changes
from sgwatch.control.history import History
from sgwatch.core.cmdline import parse
from sgwatch.engines.sglang.catalog import load_bundled
from sgwatch.live.watch import Watch

CAT = load_bundled("0.5.10")
SAMPLE = Path(__file__).resolve().parents[2] / "app/samples/qwen27b-tp2-warmup.log"
BASE = ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--tp", "2"]


def describe(old, new):
    return describe_changes(old, new, CAT)


def bench(c1_decode: float, c4_aggregate: float, accept: float | None = None) -> BenchResult:
    req = RequestResult("p1", 10, 256, 0.05, c1_decode, 0.01, 0.02, 3.0)

    def phase(c: int, aggregate: float) -> PhaseResult:
        return PhaseResult(c, [req] * c, 3.0, 256 * c, aggregate, c1_decode, 0.05, 0.08, 0.01, 0.02)

    phases = [phase(1, c1_decode), phase(4, c4_aggregate)]
    return BenchResult("ct129:30000", "m", 256, phases, accept)


def history(tmp_path) -> tuple[History, list[str]]:
    h = History("ct129", tmp_path)
    ids = [
        h.launched(parse(BASE), "/srv", 100),
        h.launched(parse([*BASE, "--enable-metrics"]), "/srv", 200),
        h.launched(parse([*BASE[:-1], "4", "--enable-metrics"]), "/srv", 300),
    ]
    h.outcome(ids[0], "ready", warmup_seconds=90.0, tok_s=60.0)
    h.note(ids[0], bench=ex.bench_record(bench(61.0, 200.0)))
    h.outcome(ids[1], "ready", warmup_seconds=80.0, tok_s=70.0)
    h.note(ids[1], bench=ex.bench_record(bench(72.0, 230.0, accept=2.5)))
    h.outcome(ids[2], "crashed", note="OOM")
    return h, ids


def test_rows_diff_against_the_oldest_run_and_the_best_bench_is_starred(tmp_path):
    h, ids = history(tmp_path)
    rows = ex.table(h.runs(), None, describe)
    assert [r.id for r in rows] == ids
    assert rows[0].baseline and rows[0].diff == []
    assert rows[1].diff == ["+ --enable-metrics"]
    assert rows[2].diff == ["~ --tp 2  →  --tp 4", "+ --enable-metrics"]
    second = rows[1]
    assert (second.bench_c1_tok_s, second.bench_tok_s, second.bench_concurrency) == (72.0, 230.0, 4)
    assert (second.ttft_s, second.accept_len, second.log_tok_s) == (0.05, 2.5, 70.0)
    assert [r.best for r in rows] == [False, True, False]
    assert rows[2].outcome == "crashed" and rows[2].bench_tok_s is None


def test_another_baseline_changes_every_diff(tmp_path):
    h, ids = history(tmp_path)
    rows = ex.table(h.runs(), ids[1], describe)
    assert [r.baseline for r in rows] == [False, True, False]
    assert rows[0].diff == ["- --enable-metrics"]
    assert rows[2].diff == ["~ --tp 2  →  --tp 4"]


def test_without_any_bench_the_best_log_rate_wins(tmp_path):
    h = History("ct129", tmp_path)
    a, b = h.launched(parse(BASE), None, 1), h.launched(parse(BASE), None, 2)
    h.outcome(a, "ready", tok_s=80.0)
    h.outcome(b, "ready", tok_s=75.0)
    rows = ex.table(h.runs(), None, describe)
    assert [r.best for r in rows] == [True, False]
    assert rows[1].diff == []  # same flags


def test_sorting_puts_the_better_end_first_and_blanks_last(tmp_path):
    h, ids = history(tmp_path)
    rows = ex.table(h.runs(), None, describe)
    assert [r.id for r in ex.sort_rows(rows, "bench_tok_s")] == [ids[1], ids[0], ids[2]]
    assert [r.id for r in ex.sort_rows(rows, "bench_tok_s", reverse=True)] == [
        ids[0], ids[1], ids[2]
    ]  # fmt: skip
    assert [r.id for r in ex.sort_rows(rows, "warmup_s")] == [ids[1], ids[0], ids[2]]
    assert [r.id for r in ex.sort_rows(rows, "time", reverse=True)] == ids[::-1]


def test_export_writes_csv_and_json_with_the_same_rows(tmp_path):
    h, ids = history(tmp_path)
    rows = ex.table(h.runs(), None, describe)
    csv_path, json_path = ex.export(rows, tmp_path / "out", "ct129")
    assert (csv_path.name, json_path.name) == ("ct129-experiments.csv", "ct129-experiments.json")
    table = list(csv.DictReader(csv_path.open()))
    records = json.loads(json_path.read_text())
    assert [r["id"] for r in table] == [r["id"] for r in records] == ids
    assert table[2]["diff"] == "~ --tp 2  →  --tp 4; + --enable-metrics"
    assert records[2]["diff"] == ["~ --tp 2  →  --tp 4", "+ --enable-metrics"]
    assert table[1]["bench_tok_s"] == "230.0" and table[2]["bench_tok_s"] == ""
    assert records[1]["best"] is True
    assert records[0]["command"].endswith("--model-path Qwen/Qwen3-8B --tp 2")


def test_ready_facts_of_a_real_warmup():
    w = Watch("ct129")
    w.feed(SAMPLE.read_bytes())
    facts = ex.ready_facts(w.state)
    assert facts["weights_gb"] == 25.74  # the heavier rank
    assert facts["kv_tokens"] == 412368
    assert facts["graph_mem_gb"] >= 0.58  # `Capture … end … mem usage=` of each capture, summed
    phases = facts["phases"]
    assert list(phases)[:2] == ["starting", "loading_weights"]
    assert "capturing_graphs" in phases and all(v >= 0 for v in phases.values())


def test_ready_facts_keep_the_target_models_weights_when_a_draft_model_loads():
    w = Watch("ct129")
    w.feed(
        b"[2026-01-01 10:00:01 TP0] Load weight end. type=Qwen3_5ForConditionalGeneration, "
        b"dtype=torch.bfloat16, avail mem=53.44 GB, mem usage=25.14 GB.\n"
        b"[2026-01-01 10:00:30 TP0] Load weight end. type=Qwen3_5ForCausalLMMTP, "
        b"dtype=torch.bfloat16, avail mem=7.45 GB, mem usage=0.76 GB.\n"
    )
    assert ex.ready_facts(w.state)["weights_gb"] == 25.14


def test_the_star_goes_to_the_highest_single_request_rate_with_its_spread(tmp_path):
    h = History("ct129", tmp_path)
    a, b = h.launched(parse(BASE), None, 1), h.launched(parse([*BASE, "--enable-metrics"]), None, 2)

    def varied(c1: list[float], aggregate: float) -> BenchResult:
        reqs = [RequestResult(f"p{i}", 10, 256, 0.05, r, 0.01, 0.02, 3.0) for i, r in enumerate(c1)]
        mean = round(sum(c1) / len(c1), 2)
        phases = [
            PhaseResult(1, reqs, 3.0, 256 * len(c1), mean, mean, 0.05, 0.08, 0.01, 0.02),
            PhaseResult(8, reqs, 3.0, 256 * 8, aggregate, mean, 0.05, 0.08, 0.01, 0.02),
        ]
        return BenchResult("ct129:30000", "m", 256, phases, None)

    h.note(a, bench=ex.bench_record(varied([114.0, 115.0, 114.5], 700.0)))
    h.note(b, bench=ex.bench_record(varied([113.0, 114.2, 113.6], 720.0)))
    rows = ex.table(h.runs(), None, describe)
    # The aggregate at 8 favours b; one request at a time, a decodes faster.
    assert [r.best for r in rows] == [True, False]
    assert [r.bench_c1_tok_s for r in rows] == [114.5, 113.6]
    assert [r.bench_c1_spread for r in rows] == [0.5, 0.6]
