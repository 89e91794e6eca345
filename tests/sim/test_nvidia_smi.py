"""The nvidia-smi stand-in, read with the parser that reads the real one."""

import json
import subprocess
import threading
import time

from sgwatch.core.gpu import parse_gpu_list, parse_gpu_row
from sgwatch.sim.common import gpustate
from sgwatch.sim.common.gpustate import IDLE_MIB, GpuSpec, Publisher
from tests.sim.smi_csv import parse_apps_csv, parse_gpu_csv

QUERY = "index,name,utilization.gpu,memory.used,memory.total,power.draw,temperature.gpu"
SMALL = ("--model-path", "Qwen/Qwen3-0.6B", "--cuda-graph-max-bs", "8")


def test_cards_and_processes_follow_a_running_server(launch, smi):
    sim = launch(*SMALL, "--tp", "2", "--base-gpu-id", "2", "--sim-speed", "300")
    sim.wait_ready()
    out = smi(f"--query-gpu={QUERY}").stdout
    assert out.splitlines()[0] == (
        "index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], "
        "power.draw [W], temperature.gpu"
    )
    cards = parse_gpu_csv(out)
    assert [c.index for c in cards] == list(range(8))
    assert {c.name for c in cards} == {"NVIDIA H100 80GB HBM3"}
    busy = {c.index for c in cards if c.mem_used_mib > 0.5 * c.mem_total_mib}
    assert busy == {2, 3}
    idle = [c for c in cards if c.index not in busy]
    assert {(c.mem_used_mib, c.util_pct, c.power_w) for c in idle} == {(IDLE_MIB, 0, 70.0)}

    apps = parse_apps_csv(smi("--query-compute-apps=pid,process_name,used_gpu_memory").stdout)
    assert sorted((a.pid, a.process_name) for a in apps) == [
        (sim.proc.pid, "sglang::scheduler_TP0"),
        (sim.proc.pid, "sglang::scheduler_TP1"),
    ]
    assert all(a.used_mib > 0.5 * cards[2].mem_total_mib for a in apps)

    fields = ["memory.used", "index"]
    rows = smi("--query-gpu=memory.used,index", "--format=csv,noheader,nounits").stdout
    samples = [parse_gpu_row(line, fields) for line in rows.splitlines()]
    assert [s.index for s in samples] == list(range(8))
    assert [s.mem_used_mib for s in samples] == [c.mem_used_mib for c in cards]

    listed = parse_gpu_list(smi("-L").stdout)
    uuids = smi("--query-gpu=uuid", "--format=csv,noheader").stdout.split()
    assert [g.uuid for g in listed] == uuids and len(set(uuids)) == 8
    assert [g.index for g in parse_gpu_csv(smi("--query-gpu=index", "-i", "2,3").stdout)] == [2, 3]


def test_unknown_field_fails_like_nvidia_smi(smi):
    r = smi("--query-gpu=index,bogus.field")
    assert (r.returncode, r.stdout) == (2, 'Field "bogus.field" is not a valid field to query.\n\n')
    assert smi("--query-gpu=index", "--format=json").returncode == 2
    assert smi("--frobnicate").returncode == 2


def test_loop_prints_the_header_once(smi):
    cmd = [str(smi.path), "--query-gpu=index,memory.used", "--format=csv", "-lms", "20", "-i", "0"]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=smi.env) as proc:
        lines = [proc.stdout.readline() for _ in range(5)]
        proc.terminate()
    assert lines[0] == "index, memory.used [MiB]\n"
    assert lines[1:] == [f"0, {IDLE_MIB} MiB\n"] * 4


def test_utilization_tracks_decode_load(launch, smi):
    # slow enough that each nvidia-smi call (seconds on a busy machine) lands mid-decode
    sim = launch(*SMALL, "--sim-speed", "10", "--sim-tok-s", "20")
    sim.wait_ready()

    def util() -> float:
        return parse_gpu_csv(smi("--query-gpu=utilization.gpu", "-i", "0").stdout)[0].util_pct

    assert util() == 0
    body = {"text": "Hi", "sampling_params": {"max_new_tokens": 1500}, "stream": True}
    events = sim.stream("/generate", body)  # 75 simulated seconds: 7.5 s
    next(events)
    assert util() > 0
    done = threading.Event()
    threading.Thread(target=lambda: (list(events), done.set()), daemon=True).start()
    assert done.wait(30)
    deadline = time.monotonic() + 10
    while util() > 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert util() == 0


def test_memory_ramps_while_weights_load(monkeypatch, tmp_path):
    monkeypatch.setenv(gpustate.STATE_ENV, str(tmp_path))
    pub = Publisher([1], ["sglang::scheduler"])
    pub.ramp(0, 10240, start=1000.0, end=1010.0)
    used = {t: gpustate.read(GpuSpec(), now=t)[1].used_mib for t in (999.0, 1005.0, 1020.0)}
    assert used == {999.0: IDLE_MIB, 1005.0: IDLE_MIB + 5120, 1020.0: IDLE_MIB + 10240}
    assert json.loads(next(tmp_path.glob("*.json")).read_text())["gpus"]["1"]["proc"] == (
        "sglang::scheduler"
    )
    pub.remove()
    assert gpustate.read(GpuSpec(), now=1020.0)[1].used_mib == IDLE_MIB
