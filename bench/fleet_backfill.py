"""Series of many servers backfilled into Prometheus blocks, for bench/fleet_scale.py.

An OpenMetrics file holds the series fleet_pages.py serves, for every server and its
node's cards, 15 s apart from 3 minutes before now to 10 minutes after it (so a run
started within those 10 minutes queries "now" inside the data), and `promtool tsdb
create-blocks-from openmetrics` turns it into blocks in the folder Prometheus opens.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import TextIO

from bench.fleet_pages import BUCKETS, DCGM, NAMES, address, down, engine_of

STEP_S, BEFORE_S, AFTER_S = 15, 180, 600


def openmetrics(out: TextIO, servers: int, gpus: int, now: float) -> None:
    """Every family's series over the time span, in OpenMetrics (families grouped)."""
    times = range(int(now) - BEFORE_S, int(now) + AFTER_S, STEP_S)
    grow = [t - now + 10_000 for t in times]  # a counter's base, growing 1 a second

    def family(name: str, kind: str, rows: list[tuple[str, list[float]]]) -> None:
        out.write(f"# TYPE {name} {kind}\n")
        sample = f"{name}_total" if kind == "counter" else name
        for labels, values in rows:
            out.writelines(
                f"{sample}{{{labels}}} {v:g} {t}\n" for t, v in zip(times, values, strict=True)
            )

    def server(i: int) -> tuple[str, str]:
        return engine_of(i), f'instance="{address(i)}:8000",job="{engine_of(i)}"'

    up = [(server(i)[1], [0.0 if down(i) else 1.0] * len(times)) for i in range(servers)]
    family("up", "gauge", up)
    for engine, (counter, running, waiting, kv, ttft, itl) in NAMES.items():
        mine = [
            (f'{lab},model_name="m{i % 7}"', i)
            for i in range(servers)
            for e, lab in [server(i)]
            if e == engine
        ]
        family(counter, "counter", [(lab, [g * (40 + i % 50) for g in grow]) for lab, i in mine])
        family(running, "gauge", [(lab, [i % 9] * len(times)) for lab, i in mine])
        family(waiting, "gauge", [(lab, [i % 3] * len(times)) for lab, i in mine])
        family(kv, "gauge", [(lab, [(i % 10) / 10] * len(times)) for lab, i in mine])
        for hist in (ttft, itl):
            out.write(f"# TYPE {hist} histogram\n")
            for lab, _i in mine:
                for b, le in enumerate(BUCKETS):
                    out.writelines(
                        f'{hist}_bucket{{{lab},le="{le}"}} {g * (b + 1):g} {t}\n'
                        for t, g in zip(times, grow, strict=True)
                    )
                count = len(BUCKETS)
                out.writelines(
                    f"{hist}_count{{{lab}}} {g * count:g} {t}\n"
                    for t, g in zip(times, grow, strict=True)
                )
                out.writelines(
                    f"{hist}_sum{{{lab}}} {g * 0.3:g} {t}\n"
                    for t, g in zip(times, grow, strict=True)
                )
    for k, name in enumerate(DCGM):
        rows = [
            (
                f'gpu="{g}",Hostname="node{i}",instance="{address(i)}:9400",job="dcgm"',
                [40.0 + g + k] * len(times),
            )
            for i in range(servers)
            for g in range(gpus)
        ]
        family(name, "gauge", rows)
    out.write("# EOF\n")


def backfill(folder: Path, servers: int, gpus: int) -> float:
    """Blocks of the series into folder/data; the seconds promtool took."""
    folder.mkdir(parents=True, exist_ok=True)
    text = folder / "series.om"
    with text.open("w") as out:
        openmetrics(out, servers, gpus, time.time())
    started = time.monotonic()
    promtool = shutil.which("promtool") or "/usr/bin/promtool"
    blocks = [
        promtool,
        "tsdb",
        "create-blocks-from",
        "openmetrics",
        str(text),
        str(folder / "data"),
    ]
    subprocess.run(blocks, check=True, capture_output=True)
    text.unlink()
    return time.monotonic() - started
