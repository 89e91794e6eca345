"""A real nvidia-smi (an H200, driver 580; how it was recorded:
tests/fixtures/nvidia_smi/h200_580/README.md) as sgwatch reads it, and the stand-in held
to the shapes it printed."""

import re
import select
import subprocess
import time

from sgwatch.core.gpu import parse_gpu_list
from sgwatch.core.gpu_history import QUERY, GpuHistory
from tests.conftest import FIXTURES
from tests.sim.smi_csv import parse_apps_csv, parse_gpu_csv

H200 = FIXTURES / "nvidia_smi" / "h200_580"
AS_H200 = {"SGWATCH_SIM_GPUS": "1", "SGWATCH_SIM_GPU_NAME": "NVIDIA H200",
           "SGWATCH_SIM_GPU_MEM_MIB": "143771"}  # fmt: skip


def recorded(name: str) -> str:
    return (H200 / name).read_text()


def loop_rows(name: str) -> list[str]:
    """A recorded `-lms` loop's rows, without the arrival time the recording put first."""
    return [line.split("\t", 1)[1] for line in recorded(name).splitlines()]


def test_the_gpu_stream_of_a_real_h200_idle_then_under_load():
    history = GpuHistory()  # the fields sgwatch's GPU stream asks for
    for row in loop_rows("loop_idle.tsv") + loop_rows("loop_load.tsv"):
        history.add_line(row)
    assert history.bad_rows == 0 and list(history.gpus) == [0]
    track = history.gpus[0]
    assert (track.latest.name, track.latest.mem_total_mib) == ("NVIDIA H200", 143771)
    assert list(track.util) == [0] * 9 + [100] * 9
    assert list(track.mem_used)[:8] == [0] * 8 and list(track.mem_used)[-1] == 21711
    assert track.power[0] == 80.11 and track.power[-1] == 697.31
    assert track.latest.temp_c == 55


def test_every_recorded_answer_reads():
    (card,) = parse_gpu_csv(recorded("query_gpu.csv"))
    assert (card.index, card.util_pct, card.mem_used_mib, card.power_w) == (0, 0, 0, 80.16)
    (same,) = parse_gpu_csv(recorded("query_gpu_noheader.csv"), QUERY)
    assert same.mem_total_mib == card.mem_total_mib == 143771
    (full,) = parse_gpu_csv(recorded("all_fields.csv"))
    assert full.values["fan.speed"] is None and full.unavailable == {"fan.speed": "[N/A]"}
    assert (full.power_limit_w, full.values["clocks.current.memory"]) == (700, 3201)
    (listed,) = parse_gpu_list(recorded("list.txt"))
    assert (listed.index, listed.name, listed.uuid) == (0, "NVIDIA H200", full.uuid)
    assert parse_apps_csv(recorded("apps_idle.csv")) == []
    (app,) = parse_apps_csv(recorded("apps_load.csv"))
    assert (app.pid, app.process_name, app.used_mib) == (742, "python3", 21702)


def shape(cell: str) -> tuple:
    """What must match between two cards' answers: a placeholder as it is, a number's
    decimals and unit, text with its digits and hex letters blanked (ids, times)."""
    if cell.startswith("["):
        return ("placeholder", cell)
    number = re.fullmatch(r"-?\d+(?:\.(\d+))?(?: (\S+))?", cell)
    if number:
        return ("number", len(number[1] or ""), number[2])
    return ("text", re.sub(r"[0-9a-f]", "x", cell))


def test_the_stand_in_answers_in_the_real_ones_shapes(smi):
    header, row = recorded("all_fields.csv").splitlines()
    fields = [cell.split(" [")[0] for cell in header.split(", ")]
    ours = subprocess.run(
        ["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv"],
        env={**smi.env, **AS_H200}, capture_output=True, text=True, timeout=30, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert ours[0] == header
    assert [shape(c) for c in ours[1].split(", ")] == [shape(c) for c in row.split(", ")]
    queried = smi("--query-gpu=" + ",".join(QUERY)).stdout.splitlines()
    assert queried[0] == recorded("query_gpu.csv").splitlines()[0]
    idle = smi("--query-compute-apps=pid,process_name,used_gpu_memory")
    assert idle.stdout == recorded("apps_idle.csv")


def test_the_stand_in_fails_as_the_real_one_does(smi):
    bad_field = smi("--query-gpu=index,bogus.field", "--format=csv")
    assert (bad_field.returncode, bad_field.stdout) == (2, recorded("bad_field.txt"))
    bad_format = smi("--query-gpu=index", "--format=xml")
    assert (bad_format.returncode, bad_format.stdout) == (2, recorded("bad_format.txt"))


def test_the_stand_ins_loop_sends_each_row_as_it_is_taken(smi):
    # The real loop's rows reached a pipe's reader one at a time, 0.45-0.5 s apart
    # (loop_*.tsv). A loop that waited for a full buffer would leave the GPU panel blank
    # for minutes: here the first row must come long before the second is due.
    cmd = ["nvidia-smi", f"--query-gpu={','.join(QUERY)}", "--format=csv,noheader,nounits",
           "-lms", "60000"]  # fmt: skip
    env = {k: v for k, v in smi.env.items() if k != "PYTHONUNBUFFERED"}  # as on a host
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env) as proc:
        try:
            deadline = time.monotonic() + 30
            got = b""
            while got.count(b"\n") < 8 and time.monotonic() < deadline:
                ready, _, _ = select.select([proc.stdout], [], [], 1)
                if ready:
                    got += proc.stdout.read1(65536)
        finally:
            proc.terminate()
    assert got.count(b"\n") == 8, got  # the first sample of each of the 8 cards
