"""The GPU stream into bounded per-GPU history; a garbled row is counted, not fatal."""

from sgwatch.core.gpu_history import HISTORY, GpuHistory


def test_rows_become_per_gpu_history_and_headers_are_skipped():
    h = GpuHistory()
    h.add_line(
        "index, name, utilization.gpu, memory.used, memory.total, power.draw, temperature.gpu"
    )
    h.add_line("0, NVIDIA H100 80GB HBM3, 87, 61234, 81559, 312.50, 64")
    h.add_line("1, NVIDIA H100 80GB HBM3, [N/A], 1024, 81559, [N/A], 40")
    h.add_line("0, NVIDIA H100 80GB HBM3, 90, 61300, 81559, 320.00, 65")
    assert sorted(h.gpus) == [0, 1]
    assert list(h.gpus[0].util) == [87, 90] and h.gpus[0].latest.temp_c == 65
    assert h.gpus[1].latest.util_pct is None and list(h.gpus[1].util) == []
    assert h.gpus[1].latest.unavailable["power.draw"] == "[N/A]"


def test_garbled_rows_are_counted_and_history_is_bounded():
    h = GpuHistory()
    h.add_line("this is not csv")
    h.add_line("0, x, 1")
    for i in range(HISTORY + 50):
        h.add_line(f"0, GPU, {i % 100}, 10, 100, 50.00, 30")
    assert h.bad_rows == 2
    assert len(h.gpus[0].util) == HISTORY
