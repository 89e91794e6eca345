"""GPU stream: one long-lived nvidia-smi per connection; a host without one says so."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from contextlib import aclosing
from pathlib import Path

from sgwatch.core.gpu_history import GpuHistory
from sgwatch.core.linesplit import LineSplitter
from sgwatch.live.streams import read_gpus
from sgwatch.live.watch import Watch
from sgwatch.remote.gpustream import GpuData, GpuStream, GpuUnavailable
from sgwatch.sim.common.nvidia_smi import install
from tests.integration.helpers import arun


def test_one_nvidia_smi_streams_samples_for_every_card(host, link, tmp_path: Path):
    install(host.gpu_bin, tmp_path / "gpu-state")
    history, split = GpuHistory(), LineSplitter()

    async def body() -> list[list[tuple[int, str]]]:
        the_link = link("gpu129")
        smi_processes = []
        async with aclosing(GpuStream(the_link, interval_ms=100).events()) as events:
            async for ev in events:
                assert isinstance(ev, GpuData), ev
                for line in split.feed(ev.data):
                    history.add_line(line)
                smi_processes.append(
                    [p for p in host.remote_processes() if "common.nvidia_smi -" in p[1]]
                )
                if len(smi_processes) == 5:
                    break
        await the_link.close()
        return smi_processes

    smi_processes = arun(body(), timeout=30)
    assert all(len(procs) == 1 for procs in smi_processes)  # the same one, every tick
    assert len({procs[0][0] for procs in smi_processes}) == 1
    assert history.gpus and history.bad_rows == 0
    assert all(t.latest.mem_total_mib for t in history.gpus.values())


def test_no_nvidia_smi_is_a_message_not_a_crash(host, link):
    async def body() -> list:
        the_link = link("ct129")
        async with aclosing(GpuStream(the_link).events()) as events:
            seen = [ev async for ev in events]
        await the_link.close()
        return seen

    (only,) = arun(body(), timeout=30)
    assert only == GpuUnavailable("no nvidia-smi on this host: no GPU data")


def smi_pids(host) -> list[int]:
    return [pid for pid, cmd in host.remote_processes() if "common.nvidia_smi -" in cmd]


def test_an_nvidia_smi_killed_on_the_host_is_started_again(host, link, tmp_path: Path):
    # A dashboard left open for days meets it (a driver reset, someone's pkill): the
    # panel says why the samples stopped, then they come again from a new nvidia-smi.
    install(host.gpu_bin, tmp_path / "gpu-state")
    watch = Watch("gpu129")

    async def body() -> tuple[str, int, int]:
        the_link = link("gpu129")
        reading = asyncio.create_task(read_gpus(the_link, watch, retry_s=0.5))
        try:
            await until(lambda: watch.gpu.gpus and smi_pids(host))
            (first,) = smi_pids(host)
            os.kill(first, signal.SIGKILL)
            await until(lambda: "starting it again" in watch.gpu_note)
            note = watch.gpu_note
            fed = watch.gpu_version
            await until(lambda: watch.gpu_version > fed and not watch.gpu_note)
            (second,) = smi_pids(host)
            return note, first, second
        finally:
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading
            await the_link.close()

    note, first, second = arun(body(), timeout=60)
    assert note.startswith("nvidia-smi stopped (exit status"), note
    assert "NVIDIA" not in note  # the last sample it printed is not given as the reason
    assert second != first


async def until(cond, timeout: float = 20) -> None:
    async with asyncio.timeout(timeout):
        while not cond():
            await asyncio.sleep(0.05)
