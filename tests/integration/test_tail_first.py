"""A long log shows its present first: the tail's lines and state before the past is read,
then the whole run's state, with no line shown twice."""

from __future__ import annotations

import asyncio
from importlib.resources import files
from pathlib import Path

from sgwatch.cli.replay import read_log
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from tests.integration.helpers import arun, stop, until

SAMPLE = files("sgwatch.samples").joinpath("qwen27b-tp2-warmup.log").read_bytes()


def decode_line(i: int) -> bytes:
    stamp = f"2026-11-30 10:{i // 3600 % 60:02d}:{i // 60 % 60:02d}"
    return (
        f"[{stamp} TP0] Decode batch, #running-req: 1, #token: {i % 9000}, "
        f"token usage: 0.01, cuda graph: True, gen throughput (token/s): {60 + i % 7}.00, "
        "#queue-req: 0\n"
    ).encode()


def long_serving_log(path: Path, lines: int) -> bytes:
    data = SAMPLE + b"".join(decode_line(i) for i in range(lines))
    path.write_bytes(data)
    return data


def test_the_tail_shows_first_then_the_whole_run_without_repeats(host, ssh, tmp_path):
    log = tmp_path / "server.log"
    data = long_serving_log(log, 40_000)  # ~6 MB
    whole = read_log(open(log, "rb"))  # noqa: SIM115 - read to its end at once

    async def body():
        watch = Watch("ct129")
        shown: list[str] = []
        session = Session(watch, ssh, log=str(log))
        task = asyncio.create_task(session.run())
        seen_preview = {}

        def look() -> bool:
            if watch.history is not None and not seen_preview:
                seen_preview.update(state=watch.state.state, history=watch.history)
            lines, _ = watch.take_lines()
            shown.extend(lines)
            return watch.caught_up

        await until(look, timeout=60)
        with log.open("ab") as f:
            f.write(decode_line(99_999))
        await until(lambda: look() and any("10:27:46 TP0" in s for s in shown), timeout=30)
        await stop(task, session)
        return watch, shown, seen_preview

    watch, shown, preview = arun(body(), timeout=120)
    # Before the past was read, the screen already knew the server was serving.
    assert preview["state"] == "serving" and preview["history"][1] == len(data)
    # The tail's lines, then what came after: each line once, in the file's order.
    assert len(shown) == len(set(shown))
    assert shown[-1].endswith("#queue-req: 0") and "10:27:46" in shown[-1]
    assert shown[:-1] == data.decode().splitlines()[-len(shown) + 1 :]
    # The whole run's state, as a replay of the file reads it, plus the new line.
    s = watch.state
    assert s.throughput.samples == whole.throughput.samples + 1
    assert s.ready and [p.name for p in s.phases] == [p.name for p in whole.phases]
