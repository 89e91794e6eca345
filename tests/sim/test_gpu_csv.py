"""nvidia-smi output as core/gpu.py reads it (headerless rows, the card list) and as the
tests read whole answers (smi_csv.py): real samples and the shapes they must survive."""

from pathlib import Path

import pytest

from sgwatch.core.gpu import CsvError, parse_gpu_list, parse_gpu_row
from tests.sim.smi_csv import parse_apps_csv, parse_gpu_csv


def sections(path: Path) -> list[str]:
    """A pasted sample may hold several answers separated by a `---` line."""
    return path.read_text().split("\n---\n")


def test_every_real_csv_sample_parses(corpus: Path):
    files = sorted(corpus.glob("nvidia-smi-csv-*"))
    assert len(files) >= 4
    for path in files:
        for text in sections(path):
            if text.startswith("pid,"):
                assert parse_apps_csv(text), path.name
            else:
                assert parse_gpu_csv(text), path.name


def test_real_memory_query(corpus: Path):
    (text,) = sections(corpus / "nvidia-smi-csv-memory-after-4.txt")
    cards = parse_gpu_csv(text)
    assert [(c.index, c.mem_used_mib, c.mem_free_mib) for c in cards][:2] == [
        (0, 20740, 3342),
        (1, 8048, 14507),
    ]
    assert len(cards) == 5 and cards[4].mem_used_mib == 18


def test_real_wide_query_with_a_long_name(corpus: Path):
    (text,) = sections(corpus / "nvidia-smi-csv-rtxpro6000-clocks-apps-6.txt")
    (card,) = parse_gpu_csv(text)
    assert card.name == "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"
    assert (card.temp_c, card.util_pct, card.power_w, card.power_limit_w) == (29, 10, 26.47, 600)
    assert (card.mem_used_mib, card.mem_total_mib) == (2082, 97887)
    assert card.values["fan.speed"] == 30 and card.values["clocks.current.graphics"] == 517
    assert card.index is None  # not queried


def test_real_utilisation_and_compute_apps(corpus: Path):
    gpus, apps = sections(corpus / "nvidia-smi-csv-util-mem-and-compute-apps-8.txt")
    (card,) = parse_gpu_csv(gpus)
    assert (card.util_pct, card.mem_used_mib, card.mem_total_mib) == (95, 745, 6144)
    assert [(a.pid, a.process_name, a.used_mib) for a in parse_apps_csv(apps)] == [
        (1580, "/app/llama-server", 340),
        (1597, "/app/llama-server", 394),
    ]


def test_noheader_nounits_stream_rows():
    fields = ["index", "name", "utilization.gpu", "memory.used", "power.draw"]
    text = "0, NVIDIA H100 80GB HBM3, 97, 74211, 612.40\n1, NVIDIA H100 80GB HBM3, 0, 18, 70.10\n"
    cards = parse_gpu_csv(text, fields)
    assert [(c.index, c.util_pct, c.mem_used_mib, c.power_w) for c in cards] == [
        (0, 97, 74211, 612.4),
        (1, 0, 18, 70.1),
    ]
    assert parse_gpu_row("3, Tesla T4, 5, 100, [N/A]", fields).power_w is None


def test_unavailable_values_say_why():
    text = (
        "index, power.draw [W], fan.speed [%]\n"
        "0, [Insufficient Permissions], [N/A]\n"
        "1, [Not Supported], 40 %\n"
    )
    first, second = parse_gpu_csv(text)
    assert (first.power_w, first.values["fan.speed"]) == (None, None)
    assert first.unavailable == {"power.draw": "[Insufficient Permissions]", "fan.speed": "[N/A]"}
    assert second.unavailable == {"power.draw": "[Not Supported]"}
    apps = parse_apps_csv("pid, process_name, used_gpu_memory [MiB]\n42, python3, [N/A]\n")
    assert (apps[0].pid, apps[0].used_mib, apps[0].unavailable) == (
        42,
        None,
        {"used_gpu_memory": "[N/A]"},
    )


def test_header_aliases_and_empty_answers():
    (card,) = parse_gpu_csv("name, uuid\nNVIDIA L40S, GPU-1234\n", ["gpu_name", "gpu_uuid"])
    assert (card.name, card.uuid) == ("NVIDIA L40S", "GPU-1234")
    assert parse_apps_csv("pid, process_name, used_gpu_memory [MiB]\n") == []
    assert parse_apps_csv("", ["pid"]) == []


def test_malformed_answers_raise_csv_error():
    with pytest.raises(CsvError):
        parse_gpu_csv("0, 1234\n")  # no header and no field list
    with pytest.raises(CsvError):
        parse_gpu_csv("index, memory.used [MiB]\n0, 12 MiB, extra\n")
    with pytest.raises(CsvError):
        parse_gpu_row("0", ["index", "memory.used"])


def test_list_gpus():
    text = (
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5e5d2b8c-0000-1111-2222-333344445555)\n"
        "  MIG 1g.10gb     Device  0: (UUID: MIG-aaaa)\n"
        "GPU 1: NVIDIA GeForce RTX 5080 (UUID: GPU-77)\n"
    )
    gpus = parse_gpu_list(text)
    assert [(g.index, g.name, g.uuid) for g in gpus] == [
        (0, "NVIDIA H100 80GB HBM3", "GPU-5e5d2b8c-0000-1111-2222-333344445555"),
        (1, "NVIDIA GeForce RTX 5080", "GPU-77"),
    ]
