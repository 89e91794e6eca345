"""Restart history: one file per host, secrets masked, outcomes folded onto their launch."""

from __future__ import annotations

import pytest

from sgwatch.control import history
from sgwatch.control.history import History, restore
from sgwatch.core.cmdline import parse

CMD = parse(
    ["HF_TOKEN=hf_x", "python3", "-m", "sglang.launch_server", "--api-key", "sk-1", "--tp", "2"]
)


def test_outcomes_fold_onto_their_launch_and_secrets_never_reach_the_file(tmp_path):
    h = History("ct129", tmp_path)
    first = h.launched(CMD, "/srv", 100)
    h.outcome(first, "ready", warmup_seconds=142.5)
    h.outcome(first, "ready", tok_s=63.7)
    second = h.launched(CMD, "/srv", 200)
    h.outcome(second, "crashed", note="RuntimeError: boom")
    text = h.path.read_text()
    assert "hf_x" not in text and "sk-1" not in text
    runs = h.runs()
    assert [(r.pid, r.outcome) for r in runs] == [(100, "ready"), (200, "crashed")]
    assert (runs[0].warmup_seconds, runs[0].tok_s) == (142.5, 63.7)
    assert runs[1].note == "RuntimeError: boom"
    assert h.last_good().pid == 100


def test_a_damaged_history_file_loses_only_the_damaged_lines(tmp_path):
    h = History("user@gpu:2222", tmp_path)
    run = h.launched(CMD, "/srv", 1)
    with h.path.open("a") as f:
        f.write('{"id": "half-writ\n[1, 2]\n\x00\x01garbage\n')
    h.outcome(run, "ready")
    assert h.path.name == "user@gpu_2222.jsonl"
    assert [r.outcome for r in h.runs()] == ["ready"]
    assert History("nobody", tmp_path).runs() == []


def test_the_file_keeps_its_newer_half_past_its_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(history, "MAX_BYTES", 4096)
    h = History("ct129", tmp_path)
    for pid in range(200):
        h.outcome(h.launched(CMD, "/srv", pid), "ready", warmup_seconds=1.0)
        assert h.path.stat().st_size <= 4096 + 1024  # the bound plus one record
    pids = [r.pid for r in h.runs()]
    assert pids[-1] == 199 and pids == list(range(pids[0], 200)) and len(pids) > 5
    assert all(r.outcome == "ready" for r in h.runs())
    assert not list(tmp_path.glob("*.tmp"))


def test_rollback_takes_masked_values_from_the_running_command():
    stored = parse(["python3", "-m", "sglang.launch_server", "--api-key", "***", "--tp", "1"])
    current = parse(["python3", "-m", "sglang.launch_server", "--api-key", "sk-2", "--tp", "2"])
    assert restore(stored, current).argv[-4:] == ["--api-key", "sk-2", "--tp", "1"]
    without = parse(["python3", "-m", "sglang.launch_server", "--tp", "2"])
    with pytest.raises(ValueError, match="--api-key is masked"):
        restore(stored, without)


def test_a_kept_history_reads_what_others_append_and_a_trim_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(history, "MAX_BYTES", 4096)
    kept, other = History("ct129", tmp_path), History("ct129", tmp_path)
    first = kept.launched(CMD, "/srv", 1)
    assert [r.outcome for r in kept.runs()] == ["launched"]
    other.outcome(first, "ready", warmup_seconds=30.0)  # another sgwatch (restart, wait)
    with kept.path.open("a") as f:
        f.write('{"id": "' + first + '", "tok_s": 5')  # its next line, half written
    assert [(r.outcome, r.tok_s) for r in kept.runs()] == [("ready", None)]
    with kept.path.open("a") as f:
        f.write('1.5, "bench": {"runs": 3}}\n')
    [run] = kept.runs()
    assert (run.outcome, run.warmup_seconds, run.tok_s, run.extra) == (
        "ready", 30.0, 51.5, {"bench": {"runs": 3}}
    )  # fmt: skip
    for pid in range(2, 60):  # the other trims the file: replaced whole
        other.outcome(other.launched(CMD, "/srv", pid), "crashed", note=f"boom {pid}")
    assert kept.runs() == History("ct129", tmp_path).runs()
    assert kept.runs()[-1].note == "boom 59" and kept.runs()[0].pid > 1
    kept.path.unlink()
    assert kept.runs() == [] and kept.last_good() is None


def test_a_restart_reads_only_the_lines_appended_since(tmp_path):
    h = History("ct129", tmp_path)
    first = h.launched(CMD, "/srv", 1)
    h.outcome(first, "ready", warmup_seconds=30.0)
    assert h.last_good().pid == 1
    size = h.path.stat().st_size
    with h.path.open("r+b") as f:  # what was read is not read again (its end is checked)
        f.write(b"#" * (size - 64))
    second = h.launched(CMD, "/srv", 2)
    h.outcome(second, "ready", warmup_seconds=31.0)
    assert [(r.pid, r.warmup_seconds) for r in h.runs()] == [(1, 30.0), (2, 31.0)]
    assert [r.pid for r in History("ct129", tmp_path).runs()] == [2]


def test_the_earlier_runs_are_worked_out_again_only_when_the_history_grew(tmp_path):
    h = History("ct129", tmp_path)
    first = h.launched(CMD, "/srv", 1)
    h.outcome(first, "ready", warmup_seconds=30.0, model="m")
    second = h.launched(CMD, "/srv", 2)  # the run being watched
    model = {"model": "m"}
    assert [e.warmup_s for e in h.earlier(model, second)] == [30.0]
    assert h.earlier(model, second) is h.earlier(model, second)  # each refresh asks
    assert h.earlier({"model": "other"}, second) == []
    h.outcome(second, "ready", warmup_seconds=31.0, model="m")
    assert [e.warmup_s for e in h.earlier(model, None)] == [30.0, 31.0]


def test_a_long_lived_process_keeps_one_history_per_host_file(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "a"))
    mcp = History.kept("ct129")
    assert History.kept("ct129") is mcp and History.kept("ct130") is not mcp
    History("ct129").outcome(History("ct129").launched(CMD, "/srv", 7), "ready")
    assert [r.pid for r in History.kept("ct129").runs()] == [7]  # another sgwatch wrote it
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "b"))
    assert History.kept("ct129") is not mcp and History.kept("ct129").runs() == []


def test_another_file_under_the_same_inode_is_read_whole(tmp_path):
    # a file replaced twice between two reads can get the first one's inode again
    kept, other = History("ct129", tmp_path), History("ct129", tmp_path / "other")
    for pid in (1, 2):
        kept.outcome(kept.launched(CMD, "/srv", pid), "ready", warmup_seconds=1.0)
    assert [r.pid for r in kept.runs()] == [1, 2]
    for pid in range(3, 9):
        other.outcome(other.launched(CMD, "/srv", pid), "ready", warmup_seconds=1.0)
    with kept.path.open("r+b") as f:  # the same inode, longer, other lines
        f.write(other.path.read_bytes())
        f.truncate()
    assert [r.pid for r in kept.runs()] == list(range(3, 9))
