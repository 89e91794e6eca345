"""The tuning loop an agent runs through MCP: restart with a flag edit, wait for ready,
read tok/s and the share of the bandwidth ceiling. Done in at most 3 tool calls and
under 2 KB of returned text, measured."""

from __future__ import annotations

import asyncio
import json
import re

from tests.agent.client import agent
from tests.integration.headless import cli_env

LOOP_BYTES = 2048
# A multimodal model: SGLang turns its piecewise CUDA graphs off unless enforced.
QWEN_VL = ("--model-path", "Qwen/Qwen3-VL-8B-Instruct", "--cuda-graph-max-bs", "16")


async def test_restart_wait_and_bench_take_three_calls_and_under_2_kb(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    await asyncio.to_thread(sims.launch, log, *QWEN_VL)
    (old,) = sims.pids
    async with agent(env, tmp_path, "--allow-actions") as client:
        first = await client.call("wait", host="gpu129", pid=old, timeout=120)
        assert first.doc["outcome"] == "ready"
        (off,) = first.doc["turned_off"]  # what the agent reads before it tunes
        assert off["keep_with"] == "--enforce-piecewise-cuda-graph", off
        client.texts.clear()  # the loop starts here

        edit = {"enable": ["enforce-piecewise-cuda-graph"]}
        done = await client.call("restart", host="gpu129", pid=old, edits=edit, confirm=True)
        new = done.doc["restarted"]
        ready = await client.call("wait", host="gpu129", pid=new, timeout=120)
        bench = await client.call("bench", host="gpu129", pid=new, max_tokens=16)
    assert len(client.texts) == 3
    read = sum(len(t.encode()) for t in client.texts)
    assert read < LOOP_BYTES, (read, client.texts)

    assert "--enforce-piecewise-cuda-graph" in done.doc["command"]
    assert "--enforce-piecewise-cuda-graph" in host.cmdline(new)
    assert (ready.doc["outcome"], ready.doc["pid"]) == ("ready", new)
    assert "turned_off" not in ready.doc  # enforced: nothing is turned off any more
    doc = bench.doc
    one = next(p for p in doc["phases"] if p["concurrency"] == 1)
    assert one["tok_s_per_request"] > 0
    # the share is the one-request rate over the ceiling, and the sentence says both
    share = 100 * one["tok_s_per_request"] / doc["ceiling_tok_s"]
    assert abs(doc["share_of_ceiling_pct"] - share) <= 0.01 * share + 0.1
    said = re.search(r"= (\d+) % of the bandwidth ceiling", doc["roofline"])
    assert said is not None and abs(int(said[1]) - doc["share_of_ceiling_pct"]) <= 1
    assert json.loads(bench.text) == doc
