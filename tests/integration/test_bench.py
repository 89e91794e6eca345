"""The bench probe and /metrics through a real SSH tunnel, against simulated servers.

The simulator runs 10x faster than the wall and decodes `--sim-tok-s` tokens per
simulated second for one request, so a request sees RATE = 10 x that per real
second; with EAGLE a step costs 1.45 steps and yields 2.86 tokens on average.
Its /metrics latencies are in simulated seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sgwatch.cli import exitcodes
from sgwatch.cli.bench import run as bench_main
from sgwatch.control.bench_probe import BenchFailed, BenchSettings, Prompt, load_prompts, run_bench
from sgwatch.control.server_http import MetricsOff, NotReady, open_server
from sgwatch.engines import process_patterns
from sgwatch.engines.port import server_port
from sgwatch.engines.sglang.metrics import read_metrics
from sgwatch.engines.shapes.metrics import between
from sgwatch.live.ingest import LogIngest
from sgwatch.remote.discover import discover
from sgwatch.transport.ssh import SshTransport
from tests.integration.detached import detached
from tests.integration.helpers import arun, wait_until
from tests.integration.sshd import SshdServer, free_port

SPEED, SIM_TOK_S = 10, 15
RATE = SPEED * SIM_TOK_S  # tok/s of one request, in real time
READY = b"The server is fired up and ready to roll!"
PROMPTS = [Prompt(f"p{i}", f"Write Python function number {i}: add two numbers.") for i in range(4)]


class Server:
    def __init__(self, port: int, pid: int, log: Path) -> None:
        self.port, self.pid, self.log = port, pid, log

    def wait_for(self, needle: bytes) -> None:
        def found() -> bool:  # `$!` comes back before the server's shell opens the log
            return self.log.exists() and needle in self.log.read_bytes()

        assert wait_until(found, timeout=60), needle


@pytest.fixture
def launch(
    host: SshdServer, ssh: Callable[..., SshTransport], tmp_path: Path
) -> Iterator[Callable[..., Server]]:
    """Start simulated servers detached through SSH; all are stopped afterwards."""
    started: list[Server] = []

    def start(*flags: str, wait: bytes = READY) -> Server:
        port = free_port()
        log = tmp_path / f"server-{port}.log"
        argv = [sys.executable, "-m", "sgwatch.sim", "--model-path", "Qwen/Qwen3-8B"]
        argv += ["--host", "127.0.0.1", "--port", str(port), "--sim-speed", str(SPEED)]
        argv += ["--sim-tok-s", str(SIM_TOK_S), *flags]

        async def go() -> int:
            t = ssh("ct129")
            await t.connect()
            try:
                return int((await t.run(detached(argv, str(tmp_path), str(log)))).stdout)
            finally:
                await t.close()

        server = Server(port, arun(go()), log)
        started.append(server)
        server.wait_for(wait)
        return server

    yield start
    for s in started:
        with contextlib.suppress(ProcessLookupError):  # one test kills its server itself
            host.killpg(s.pid, signal.SIGKILL)
    assert wait_until(lambda: not any(host.alive(s.pid) for s in started))


async def connected(ssh: Callable[..., SshTransport]) -> SshTransport:
    t = ssh("ct129")
    await t.connect()
    return t


def test_bench_through_the_tunnel_matches_the_simulated_rates_and_its_metrics(launch, ssh):
    server = launch("--enable-metrics")
    seen = []

    async def body():
        t = await connected(ssh)
        try:
            async with open_server(t, server.port) as api:
                before = read_metrics(await api.metrics_text())
                result = await run_bench(api, BenchSettings(PROMPTS, 4, 64), seen.append)
                after = read_metrics(await api.metrics_text())
                return result, before, after
        finally:
            await t.close()

    result, before, after = arun(body())
    one, four = result.phases
    assert (one.concurrency, four.concurrency) == (1, 4)
    assert result.model == "Qwen/Qwen3-8B" and result.accept_length is None
    for phase in result.phases:
        assert [r.output_tokens for r in phase.requests] == [64] * 4  # ignore_eos, fixed length
        assert phase.decode_tok_s == pytest.approx(RATE, rel=0.15)
        for r in phase.requests:
            assert r.decode_tok_s == pytest.approx(RATE, rel=0.2)
            assert r.itl_p50_s <= r.itl_p95_s
        # Chunks may arrive bunched (the simulator steps on a 5 ms tick), so the median gap
        # is at most a step and the slow tail at least one.
        assert phase.itl_p50_s <= 1.3 / RATE and phase.itl_p95_s >= 0.7 / RATE
    assert one.aggregate_tok_s == pytest.approx(RATE, rel=0.2)
    # A batch of 4 decodes at once: more than twice one request's rate in the same run (one
    # after another would be 1x; a loaded machine staggers the four's first tokens a little).
    assert four.aggregate_tok_s > 2 * one.aggregate_tok_s
    # Progress: each phase announced, then one step per request, ending at the total.
    assert [p.done for p in seen] == [0, 1, 2, 3, 4, 4, 5, 6, 7, 8]
    assert seen[-1].total == 8 and seen[-1].concurrency == 4

    # /metrics, read through the same tunnel, counted exactly what the bench sent.
    requests = [r for p in result.phases for r in p.requests]
    w = between(before, after, seconds=1.0)
    assert after.generation_tokens - before.generation_tokens == 8 * 64
    assert after.prompt_tokens - before.prompt_tokens == sum(r.prompt_tokens for r in requests)
    assert w.requests_done == 8
    assert after.ttft.count - before.ttft.count == 8
    assert (after.running, after.queued) == (0, 0)
    # Inter-token latency in simulated seconds: one decode step is 1/SIM_TOK_S = 67 ms.
    assert 0.06 < w.itl_p50 <= 0.1 and 0.06 < w.itl_p95 <= 0.1
    # The throughput gauge is the same figure the log's last Decode batch line reports.
    ingest = LogIngest()
    ingest.feed(server.log.read_bytes())
    ingest.flush()
    assert after.gen_throughput == pytest.approx(ingest.state.throughput.last, abs=0.01)


def test_speculative_decoding_scales_the_rate_and_reports_the_accept_length(launch, ssh):
    server = launch("--speculative-algorithm", "EAGLE")

    async def body():
        t = await connected(ssh)
        try:
            async with open_server(t, server.port) as api:
                with pytest.raises(MetricsOff, match="without --enable-metrics"):
                    await api.metrics_text()
                return await run_bench(api, BenchSettings(PROMPTS[:2], 1, 128))
        finally:
            await t.close()

    result = arun(body())
    (phase,) = result.phases
    assert result.accept_length == pytest.approx(2.86, abs=0.2)
    assert phase.decode_tok_s == pytest.approx(RATE * 2.86 / 1.45, rel=0.2)


def test_bench_refuses_a_server_that_is_still_warming_up(launch, ssh, capsys):
    # The first request compiles for 600 simulated seconds: /health stays 503 meanwhile.
    server = launch("--sim-warmup-seconds", "600", wait=b"Uvicorn running on")

    async def body():
        t = await connected(ssh)
        try:
            async with open_server(t, server.port) as api:
                await run_bench(api, BenchSettings(PROMPTS, 1, 8))
        finally:
            await t.close()

    with pytest.raises(NotReady, match="not ready yet"):
        arun(body())
    # The command says so and fails; a script can wait for ready first.
    assert bench_main(cli_args("ct129", server.port), lambda: ssh("ct129")) == exitcodes.FAILED
    assert "not ready yet" in capsys.readouterr().err
    assert b"/v1/chat/completions" not in server.log.read_bytes()  # nothing was sent


def test_a_bench_can_be_cancelled_and_fails_clearly_when_the_server_dies(launch, host, ssh):
    server = launch("--enable-metrics")
    endless = BenchSettings(PROMPTS, 1, 100_000)

    async def started(api, running: int):
        bench = asyncio.create_task(run_bench(api, endless))
        while (read_metrics(await api.metrics_text()).running or 0) < running:
            await asyncio.sleep(0.05)
        return bench

    async def body():
        t = await connected(ssh)
        try:
            async with open_server(t, server.port) as api:
                bench = await started(api, 1)
                bench.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await bench
                await api.ensure_ready()  # the forward still carries requests
                # The simulator, unlike SGLang, finishes a request whose client left.
                bench = await started(api, 2)
                host.killpg(server.pid, signal.SIGKILL)
                with pytest.raises(BenchFailed, match="the server stopped answering"):
                    await bench
        finally:
            await t.close()

    arun(body())


def cli_args(
    host: str, port: int | None, as_json: bool = False, pid: int | None = None
) -> argparse.Namespace:
    return argparse.Namespace(
        host=host,
        concurrency=2,
        max_tokens=16,
        prompts=None,
        port=port,
        pid=pid,
        json=as_json,
        config=None,
        accept_new_host_key=False,
    )


def test_the_command_prints_json_and_exits_by_what_went_wrong(launch, ssh, capsys, tmp_path):
    server = launch()

    async def look():
        t = await connected(ssh)
        try:
            return await discover(t, process_patterns())
        finally:
            await t.close()

    # Without --port the command asks discovery: the server's own argv names its port.
    (found,) = [s for s in arun(look()).servers if s.pid == server.pid]
    assert server_port(found.argv) == server.port
    assert server_port(["python", "-m", "sglang.launch_server", "--port=31000"]) == 31000
    assert server_port(["sglang", "serve", "Qwen/Qwen3-8B", "--tp", "2"]) == 30000

    prompts = tmp_path / "prompts.toml"
    prompts.write_text('[[prompt]]\nname = "hello"\ntext = "Say hello in Rust."\n')
    args = cli_args("ct129", server.port, as_json=True)
    args.prompts = str(prompts)
    assert bench_main(args, lambda: ssh("ct129")) == exitcodes.OK
    doc = json.loads(capsys.readouterr().out)
    assert doc["target"] == f"ct129:{server.port}"
    assert [p["concurrency"] for p in doc["phases"]] == [1, 2]
    assert {r["prompt"] for p in doc["phases"] for r in p["requests"]} == {"hello"}
    assert all(r["output_tokens"] == 16 for p in doc["phases"] for r in p["requests"])
    args.json = False
    assert bench_main(args, lambda: ssh("ct129")) == exitcodes.OK
    table = capsys.readouterr().out
    assert table.startswith(f"bench ct129:{server.port}: Qwen/Qwen3-8B, 16 tokens a request\n")
    assert "concurrency 1: 1 requests" in table and "concurrency 2: 2 requests" in table
    assert table.count("  hello ") == 3  # a row per request

    # Nothing listens on the port: the server is not up.
    assert bench_main(cli_args("ct129", free_port()), lambda: ssh("ct129")) == exitcodes.FAILED
    assert "no server answers" in capsys.readouterr().err
    # No sshd answers: unreachable.
    nobody = f"127.0.0.1:{free_port()}"
    assert bench_main(cli_args(nobody, 30000), lambda: ssh(nobody)) == exitcodes.UNREACHABLE
    # A prompts file that is not [[prompt]] tables: bad input, nothing is sent.
    prompts.write_text("prompt = 'not a table'\n")
    assert bench_main(args, lambda: ssh("ct129")) == exitcodes.USAGE
    assert str(prompts) in capsys.readouterr().err
    # Two servers and neither --port nor --pid: which one is not guessed.
    other = launch(wait=b"Uvicorn running on")
    assert bench_main(cli_args("ct129", None), lambda: ssh("ct129")) == exitcodes.AMBIGUOUS
    err = capsys.readouterr().err
    assert f"pid {server.pid}: " in err and f"pid {other.pid}: " in err
    gone = cli_args("ct129", None, pid=1)  # the host's sshd: a process, but no server
    assert bench_main(gone, lambda: ssh("ct129")) == exitcodes.NO_SERVER


def test_the_bundled_prompts_are_coding_tasks():
    prompts = load_prompts()
    assert len(prompts) >= 4
    assert len({p.name for p in prompts}) == len(prompts)
    assert all(len(p.text) > 100 for p in prompts)
