"""host/recent.py on real folders: which files are the logs of servers that are gone."""

from __future__ import annotations

import os
import time
from pathlib import Path

from sgwatch.engines import all_engines
from sgwatch.remote.discover import gone_logs
from sgwatch.remote.host.recent import engine_of, recent_logs

ASK = gone_logs([(e.name, e.markers) for e in all_engines()], [])
SGLANG = b"[2026-01-10 08:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
VLLM = b"(APIServer pid=9) INFO 01-10 08:00:00 [api_server.py:1] vLLM API server version 0.11\n"


def write(path: Path, data: bytes, age: float = 0.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    when = time.time() - age
    os.utime(path, (when, when))
    return path


def found(folder: Path, **ask) -> list[tuple[str, str]]:
    answer = recent_logs({**ASK, **ask}, [str(folder)])
    return [(Path(log["path"]).name, log["engine"]) for log in answer["logs"]]


def test_recent_server_logs_newest_first_each_with_its_engine(tmp_path):
    write(tmp_path / "sglang.log", SGLANG, age=600)
    write(tmp_path / "runs" / "vllm.log", b"nohup: ignoring input\n" + VLLM, age=60)
    assert found(tmp_path) == [("vllm.log", "vllm"), ("sglang.log", "sglang")]


def test_old_deep_hidden_empty_scripts_and_other_files_are_not_logs(tmp_path):
    write(tmp_path / "old.log", SGLANG, age=2 * 3600)  # over an hour ago
    write(tmp_path / "a" / "b" / "deep.log", SGLANG)  # two levels down
    write(tmp_path / ".hidden.log", SGLANG)
    write(tmp_path / "empty.log", b"")
    write(tmp_path / "serve.sh", b"python -m sglang.launch_server --model-path m\n")
    write(tmp_path / "serve", b"#!/bin/sh\npython -m sglang.launch_server --model-path m\n")
    write(tmp_path / "notes.txt", b"nothing a server prints\n")
    launches = b'{"argv": ["python", "-m", "sglang.launch_server"], "log": "/tmp/s.log"}\n'
    write(tmp_path / "ct129.jsonl", launches)  # a restart history copied out of its folder
    write(tmp_path / "kept.log", SGLANG)
    assert found(tmp_path) == [("kept.log", "sglang")]


def test_the_first_engine_asked_wins_and_the_head_alone_is_read(tmp_path):
    both = SGLANG + VLLM
    assert engine_of(both, [["sglang", ["server_args="]], ["vllm", ["vLLM API server"]]]) == (
        "sglang"
    )
    # a marker past the first bytes read does not make a log
    write(tmp_path / "late.log", b"x" * 9000 + b"\n" + SGLANG)
    assert found(tmp_path) == []


def test_the_tail_starts_at_a_line_and_the_answer_is_bounded(tmp_path):
    write(tmp_path / "long.log", SGLANG + b"Decode batch. #running-req: 1\n" * 2000)
    for n in range(5):
        write(tmp_path / f"s{n}.log", SGLANG, age=n)
    answer = recent_logs({**ASK, "most": 3}, [str(tmp_path)])
    assert len(answer["logs"]) == 3 and not answer["cut"]
    long = recent_logs(ASK, [str(tmp_path)])["logs"]
    tail = next(log["tail"] for log in long if log["path"].endswith("long.log"))
    assert tail.startswith("Decode batch.") and len(tail) <= ASK["tail"]


def test_a_spent_budget_stops_the_scan_and_says_so(tmp_path):
    write(tmp_path / "top.log", SGLANG, age=60)
    write(tmp_path / "below" / "sub.log", SGLANG)
    for n in range(3):
        write(tmp_path / f"plain{n}.out", b"not a log\n", age=n)  # newer than the log
    spent = {**ASK, "budget": -1.0}
    assert recent_logs({**spent, "sure": 3}, [str(tmp_path)]) == {"logs": [], "cut": True}
    # the newest `sure` files are read whatever the time; the folders below are not seen
    answer = recent_logs({**spent, "sure": 4}, [str(tmp_path)])
    assert [Path(log["path"]).name for log in answer["logs"]] == ["top.log"] and answer["cut"]
    assert not recent_logs(ASK, [str(tmp_path)])["cut"]
