"""The flag panel's rows and edits, against a bundled SGLang catalog."""

from __future__ import annotations

import pytest

from sgwatch.control import flagedit
from sgwatch.core.cmdline import LaunchError, parse
from sgwatch.engines.sglang.catalog import load_bundled
from sgwatch.engines.sglang.effective import differences

CAT = load_bundled("0.5.10")
RUNNING = parse(
    [
        *("python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"),
        *("--tp", "2", "--api-key", "sk-secret", "--disable-cuda-graph"),
    ]
)


def opt(name: str):
    return CAT.get(name)


def row(rows, name):
    return next(r for rs in rows.values() for r in rs if r.option.name == name)


def test_rows_show_pending_running_and_default_and_put_set_flags_first():
    pending = flagedit.toggle(RUNNING, opt("--enable-metrics"), CAT)
    rows = flagedit.rows(CAT, RUNNING, pending, [])
    metrics = row(rows, "--enable-metrics")
    assert (metrics.value, metrics.running, metrics.default, metrics.changed) == (
        "on", "", "off", True
    )  # fmt: skip
    tp = row(rows, "--tensor-parallel-size")  # written as the abbreviation --tp
    assert (tp.value, tp.running, tp.changed) == ("2", "2", False)
    parallel = rows["Parallelism"]
    assert parallel[0].option.name == "--tensor-parallel-size"  # set flags sort first
    assert not any(r.option.removed for rs in rows.values() for r in rs)


def test_search_matches_words_in_names_help_and_groups():
    rows = flagedit.rows(CAT, RUNNING, RUNNING, [], "piecewise tokens")
    names = [r.option.name for rs in rows.values() for r in rs]
    assert "--piecewise-cuda-graph-tokens" in names
    assert all("piecewise" in n for n in names)
    assert flagedit.rows(CAT, RUNNING, RUNNING, [], "no-such-flag-anywhere") == {}


def test_toggle_switches_on_and_off_and_removes_what_was_written():
    off = flagedit.toggle(RUNNING, opt("--disable-cuda-graph"), CAT)
    assert "--disable-cuda-graph" not in off.argv
    assert flagedit.toggle(off, opt("--disable-cuda-graph"), CAT).argv[-1] == "--disable-cuda-graph"
    with pytest.raises(LaunchError, match="takes a value"):
        flagedit.toggle(RUNNING, opt("--mem-fraction-static"), CAT)


def test_edit_validates_like_argparse_and_keeps_one_literal_value():
    mem = opt("--mem-fraction-static")
    assert flagedit.edit(RUNNING, mem, "0.8", CAT).argv[-2:] == ["--mem-fraction-static", "0.8"]
    with pytest.raises(LaunchError, match="invalid float"):
        flagedit.edit(RUNNING, mem, "lots", CAT)
    backend = opt("--attention-backend")
    with pytest.raises(LaunchError, match="invalid choice"):
        flagedit.edit(RUNNING, backend, "warp", CAT)
    name = opt("--served-model-name")
    hostile = "a b; rm -rf ~"
    assert flagedit.edit(RUNNING, name, hostile, CAT).argv[-1] == hostile
    tokens = opt("--cuda-graph-bs")
    assert flagedit.edit(RUNNING, tokens, "1 2 4", CAT).argv[-3:] == ["1", "2", "4"]
    assert "--tp" not in flagedit.edit(RUNNING, opt("--tp-size"), "", CAT).argv  # empty removes


def test_the_pending_diff_masks_secrets_and_the_panel_shows_overrides():
    pending = flagedit.edit(RUNNING, opt("--api-key"), "sk-other", CAT)
    pending = flagedit.remove(pending, opt("--disable-cuda-graph"), CAT)
    lines = flagedit.describe_changes(RUNNING, pending, CAT)
    assert lines == ["- --disable-cuda-graph"]  # a changed secret is not shown, even masked
    resolved = {"tp_size": 2, "disable_cuda_graph": False, "chunked_prefill_size": 8192}
    rows = flagedit.rows(CAT, RUNNING, RUNNING, differences(RUNNING, resolved, CAT))
    cuda = row(rows, "--disable-cuda-graph")
    assert (cuda.effective, cuda.reason) == ("off", "overridden")
    assert row(rows, "--chunked-prefill-size").reason == "auto"
