"""`wait` and `status` over MCP: a warmup followed to ready with progress notifications,
and a crash reported with its cause and the phase it died in."""

from __future__ import annotations

import asyncio

from sgwatch.agent.budget import ANSWER_BYTES
from tests.agent.client import agent
from tests.integration.headless import CRASH_KV, QWEN, cli_env


async def _told(client, needle: str, timeout: float = 60) -> None:
    async with asyncio.timeout(timeout):
        while not any(needle in m for _, m in client.progress):
            await asyncio.sleep(0.05)


async def test_wait_follows_a_warmup_to_ready_telling_each_phase_and_the_captures(
    host, sims, tmp_path
):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    async with agent(env, tmp_path) as client:
        call = asyncio.create_task(
            client.call("wait", host="gpu129", log=str(log), timeout=120, every=8)
        )
        await _told(client, "waiting")  # the log is not there yet: the warmup is all ahead
        await asyncio.to_thread(sims.launch, log, *QWEN, speed="20")
        done = await call
    doc = done.doc
    assert (doc["outcome"], doc["exit"], doc["state"]) == ("ready", 0, "ready")
    assert doc["meaning"].startswith("ok")
    assert doc["model"] == "Qwen/Qwen3-8B" and doc["warmup_s"] > 0
    assert len(done.text) <= ANSWER_BYTES
    values = [v for v, _ in client.progress]
    assert values == sorted(values) and len(set(values)) == len(values)
    said = [m for _, m in client.progress]
    phases = [m.removeprefix("phase ") for m in said if m.startswith("phase ")]
    assert phases[-4:] == ["allocating_kv_cache", "capturing_graphs", "warming_up", "ready"]
    steps = [m for m in said if m.startswith("decode ")]
    # every 8th step of the capture and its last, not every step
    counts = [tuple(map(int, m.split()[1].rstrip(",").split("/"))) for m in steps]
    assert counts and counts[-1][0] == counts[-1][1]
    assert all(n % 8 == 0 or n == total for n, total in counts)
    assert said[-1].startswith("READY")


async def test_a_crash_is_answered_with_its_cause_and_phase_by_wait_and_status(
    host, sims, tmp_path
):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    await asyncio.to_thread(sims.launch, log, *CRASH_KV)
    async with agent(env, tmp_path) as client:
        waited = await client.call("wait", host="gpu129", log=str(log), timeout=120)
        looked = await client.call("status", host="gpu129", log=str(log))
    doc = waited.doc
    assert (doc["outcome"], doc["exit"], doc["state"]) == ("crashed", 1, "crashed")
    assert "crashed" in doc["meaning"]
    for crash in (doc["crash"], looked.doc["crash"]):
        assert crash["phase"] == "allocating_kv_cache"
        assert "Not enough memory" in crash["cause"]
    assert looked.doc["state"] == "crashed"
    assert max(len(waited.text), len(looked.text)) <= ANSWER_BYTES
