"""Every read tool over MCP on a ready simulated server: each answer within its byte
budget, its text free of terminal escapes, secrets masked; `launch` previews a server's
command, refuses anything else in one line, and starts nothing read-only."""

from __future__ import annotations

import asyncio
import shlex
import sys

from sgwatch.agent.budget import ANSWER_BYTES, LOG_BYTES, TEXT_CHARS
from sgwatch.live.records import KINDS
from tests.agent.client import agent
from tests.integration.headless import QWEN, cli_env
from tests.integration.sshd import free_port

SECRET = "sekrit-value-42"


async def test_each_tool_answers_within_its_budget_with_secrets_masked(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    await asyncio.to_thread(sims.launch, log, *QWEN, "--api-key", SECRET)
    (pid,) = sims.pids
    async with agent(env, tmp_path) as client:
        assert (await client.call("wait", host="gpu129", pid=pid, timeout=120)).doc["exit"] == 0
        servers = await client.call("servers", host="gpu129")
        status = await client.call("status", host="gpu129", pid=pid)
        events = await client.call("events", host="gpu129", pid=pid, seconds=1, only=["phase"])
        lines = await client.call("log", host="gpu129", pid=pid, lines=50)
        grep = await client.call("log", host="gpu129", pid=pid, grep="API_KEY")
        flags = await client.call("flags", host="gpu129", pid=pid)
        runs = await client.call("experiments", host="gpu129")
        bad_kind = await client.call("events", host="gpu129", only=["phases"])
    for answer in client.texts:
        assert SECRET not in answer and "\x1b" not in answer
    for answer in (servers, status, events, flags, runs):
        assert len(answer.text.encode()) <= ANSWER_BYTES
    assert len(lines.text.encode()) <= LOG_BYTES

    mine = next(s for s in servers.doc["servers"] if s["pid"] == pid)
    assert mine["model"] == "Qwen/Qwen3-8B" and mine["output"].endswith("server.log")
    assert (status.doc["state"], status.doc["pid"]) == ("ready", pid)
    assert [e["state"] for e in events.doc["events"]] == ["ready"]
    assert 1 <= len(lines.doc["lines"]) <= 50
    assert all(len(line) <= TEXT_CHARS for line in lines.doc["lines"])
    (dump,) = grep.doc["lines"]
    assert "server_args" not in dump and "api_key=***" in dump  # cut to show the match
    assert "--cuda-graph-max-bs 16" in flags.doc["flags"]["CUDA graphs"]
    assert runs.doc["runs"] == 0  # looking records nothing in the history
    assert bad_kind.error and bad_kind.text.endswith(f"phases (kinds: {', '.join(KINDS)})")


async def test_launch_previews_a_server_command_and_refuses_anything_else(host, sims, tmp_path):
    env = cli_env(host, tmp_path / "home")
    port = free_port()
    argv = [sys.executable, "-m", "sgwatch.sim", *QWEN, "--port", str(port)]
    before = {p.pid for p in host.processes()}
    async with agent(env, tmp_path) as client:
        preview = await client.call("launch", host="gpu129", command=shlex.join(argv))
        typo = [*argv, "--max-running-requests", "many"]
        bad = await client.call("launch", host="gpu129", command=shlex.join(typo))
        shell = await client.call("launch", host="gpu129", command="python3 -m http.server 8000")
        piped = await client.call("launch", host="gpu129", command=shlex.join(argv) + " | tee x")
        unconfirmed = await client.call(
            "launch", host="gpu129", command=shlex.join(argv), confirm=True
        )
    doc = preview.doc
    assert doc["command"] == shlex.join(argv) and "launched" not in doc
    assert doc["would"].startswith("start it detached")
    for refused in (bad, shell, piped, unconfirmed):
        assert refused.error and "\n" not in refused.text, refused.text
    assert "many" in bad.text and "nothing was started" in bad.text
    assert "not the command of a server" in shell.text
    assert "read-only" in unconfirmed.text
    started = {p.pid for p in host.processes()} - before
    assert not started, started
