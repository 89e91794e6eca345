"""`restart` over MCP: a flag edit previewed without confirm, refused by a read-only
server even with it, done by a server started with --allow-actions; each refusal a
one-line tool error and the server untouched."""

from __future__ import annotations

import asyncio

from sgwatch.agent.budget import ANSWER_BYTES
from tests.agent.client import agent
from tests.integration.headless import QWEN, cli_env


async def test_a_flag_edit_is_previewed_refused_read_only_and_done_with_both(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    await asyncio.to_thread(sims.launch, tmp_path / "server.log", *QWEN)
    (old,) = sims.pids
    edit = {"enable": ["enable-metrics"], "set": {"--served-model-name": "my model; rm -rf ~"}}

    async with agent(env, tmp_path) as client:
        ready = await client.call("wait", host="gpu129", pid=old, timeout=120)
        assert ready.doc["outcome"] == "ready"
        argv = host.cmdline(old)  # once ready: before, `nohup` may not have exec'd it yet
        preview = await client.call("restart", host="gpu129", pid=old, edits=edit)
        refused = await client.call("restart", host="gpu129", pid=old, edits=edit, confirm=True)
        unknown = await client.call("restart", host="gpu129", pid=old, edits={"enable": ["warp"]})
    doc = preview.doc
    assert doc["pid"] == old and "restarted" not in doc
    assert "--enable-metrics" in doc["command"] and "'my model; rm -rf ~'" in doc["command"]
    assert "+ --enable-metrics" in doc["changes"]
    assert doc["would"].startswith(f"stop pid {old}")
    assert "--allow-actions" in doc["confirm"]
    assert refused.error and "\n" not in refused.text
    assert "read-only" in refused.text and "--allow-actions" in refused.text
    assert unknown.error and "--warp is not a flag of SGLang" in unknown.text
    assert host.alive(old) and host.cmdline(old) == argv  # untouched by all three

    async with agent(env, tmp_path, "--allow-actions") as client:
        unconfirmed = await client.call("restart", host="gpu129", pid=old, edits=edit)
        assert host.alive(old) and "restarted" not in unconfirmed.doc
        done = await client.call("restart", host="gpu129", pid=old, edits=edit, confirm=True)
        new = done.doc["restarted"]
        ready = await client.call("wait", host="gpu129", pid=new, timeout=120)
    assert ready.doc["outcome"] == "ready" and ready.doc["pid"] == new
    assert not host.alive(old) and host.alive(new)
    argv = host.cmdline(new)
    assert "--enable-metrics" in argv
    assert argv[argv.index("--served-model-name") + 1] == "my model; rm -rf ~"
    assert max(len(t) for t in client.texts) <= ANSWER_BYTES
