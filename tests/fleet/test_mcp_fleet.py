"""The MCP `fleet` tool, called by the SDK's own client over stdio: a Prometheus fleet
of simulated servers of both engines (and a target nothing answers) as counts and
rows, problems first, within the answer's budget; a name that is no fleet is one line."""

from __future__ import annotations

import asyncio
import os
import time

from sgwatch.agent.budget import ANSWER_BYTES, answer
from sgwatch.agent.fleet import MAX_LISTED, summary
from sgwatch.fleet.row import FleetRow
from sgwatch.fleet.source import FleetSnapshot
from tests.agent.client import agent
from tests.fleet.rig import MODELS
from tests.sim.simproc import HOST, free_port


async def test_fleet_tool_lists_both_engines_problems_first(prometheus, servers, tmp_path):
    job = f"mcp-{tmp_path.name}"
    dead = free_port()  # a target nothing listens on: down
    prometheus.targets(job, [*(s.port for s in servers.all), dead])
    config = (
        f'[fleets.lab]\nprometheus = "{prometheus.url}"\n'
        f'match = [\'job="{job}"\']\nrate_window = "5s"\n'
    )
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    busy = {f"{HOST}:{sim.port}": engine for engine, sim in servers.busy.items()}
    async with agent(env, tmp_path, config_text=config) as client:
        deadline = time.monotonic() + 30
        while True:
            doc = (await client.call("fleet", name="lab")).doc
            rows = {r["instance"]: r for r in doc["servers"]}
            # every rate known: two scrapes of each up server within the window
            rates = [r.get("gen_tok_s") for r in rows.values() if r["state"] != "down"]
            if doc["counts"] == {"serving": 2, "idle": 1, "down": 1} and None not in rates:
                break
            assert time.monotonic() < deadline, doc
            await asyncio.sleep(0.5)
        unknown = await client.call("fleet", name="nosuch")
        no_group = await client.call("fleet", name="@nosuch")

    assert doc["fleet"] == "lab" and doc["stale"] is False and "not_listed" not in doc
    first = doc["servers"][0]
    assert first["instance"] == f"{HOST}:{dead}" and first["state"] == "down"
    assert first["detail"]  # the scrape's error: why it is down
    for instance, engine in busy.items():
        row = rows[instance]
        assert (row["engine"], row["model"], row["state"]) == (engine, MODELS[engine], "serving")
        assert row["gen_tok_s"] > 0
    idle = rows[f"{HOST}:{servers.idle.port}"]
    assert (idle["engine"], idle["state"], idle["gen_tok_s"]) == ("vllm", "idle", 0)
    assert set(first) <= {"instance", "engine", "model", "state", "detail", "gen_tok_s"}
    assert all(len(text.encode()) <= ANSWER_BYTES for text in client.texts)
    assert unknown.error and no_group.error
    assert unknown.text.endswith("no fleet nosuch in the config (fleets: lab; groups take @NAME)")
    assert no_group.text.endswith("no group @nosuch in the config (groups: none)")
    assert "\n" not in unknown.text + no_group.text


def test_a_big_fleet_is_counted_whole_and_listed_problems_first():
    def row(i: int, state: str) -> FleetRow:
        detail = "connection refused " * 10 if state == "down" else ""
        return FleetRow(
            f"k{i}", f"10.0.0.{i}:30000", state, "sglang", "Qwen/Qwen3-8B", detail=detail
        )

    states = ["serving"] * 40 + ["warming"] * 3 + ["crashed", "down", "idle"] * 2
    snap = FleetSnapshot(tuple(row(i, s) for i, s in enumerate(states)), fetched_at=0.0)
    doc = summary("big", snap)
    assert doc["counts"] == {"serving": 40, "warming": 3, "crashed": 2, "down": 2, "idle": 2}
    listed = [r["state"] for r in doc["servers"]]
    assert 4 <= len(listed) <= MAX_LISTED  # every crashed and down one, then warming
    assert listed == ["crashed"] * 2 + ["down"] * 2 + ["warming"] * (len(listed) - 4)
    assert doc["not_listed"] == len(states) - len(listed)
    assert all(len(r["detail"]) <= 80 for r in doc["servers"] if "detail" in r)
    assert len(answer(doc).encode()) <= ANSWER_BYTES and "cut" not in answer(doc)
