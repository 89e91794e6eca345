"""The soak's short version (bench/soak.py runs the long one): the dashboard, built as
the CLI builds it for a host, follows a serving simulated server through dropped links,
a restart with a flag edit, and a crash (the server SIGKILLed) with a new server
launched onto its log; after each, what it holds comes back to what it held before:
open file descriptors, asyncio tasks, threads, and the processes its session keeps on
the host. RSS is the bench's to judge (too noisy in two minutes)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import signal
import threading
from functools import partial
from pathlib import Path

import pytest

from sgwatch.cli import exitcodes
from sgwatch.control.controller import Controller
from sgwatch.control.history import History
from sgwatch.core.events import CRASHED
from sgwatch.live.linkstate import LIVE, Link
from sgwatch.live.options import Options
from sgwatch.live.session import Session
from sgwatch.live.transition import LINK, Transition
from sgwatch.live.watch import Watch
from sgwatch.transport.ssh import SshTransport
from sgwatch.ui.app import SgwatchApp
from tests.conftest import until
from tests.fault.proxy import FaultProxy
from tests.integration.headless import SimHost, cli_env, generate, sgwatch
from tests.integration.sshd import SshdServer, command

ALIAS = "soak129"  # the sshd's GPU port (the nvidia-smi stand-in on PATH) through a proxy
QWEN = ("--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "16", "--decode-log-interval", "4")
DROPS = 3
SETTLE_S = 30.0  # for the figures to come back after a drop or a restart


@pytest.fixture
def gpu_proxy(host: SshdServer):
    p = FaultProxy(host.gpu_port).start()
    yield p
    p.stop()


@pytest.fixture
def env(host: SshdServer, gpu_proxy: FaultProxy, tmp_path: Path) -> dict[str, str]:
    """A user's environment whose ~/.ssh/config names ALIAS, the proxied GPU port."""
    home = tmp_path / "home"
    block = host.client_config(home / ".ssh" / "known_hosts").split("\n\n")[-1]
    block = block.replace("Host gpu129", f"Host {ALIAS}").replace(
        f"Port {host.gpu_port}", f"Port {gpu_proxy.port}"
    )
    block = block.replace("ConnectTimeout 5", "ConnectTimeout 30")  # a busy CI machine
    made = cli_env(host, home, block)
    kind, key = host.host_key.with_suffix(".pub").read_text().split()[:2]
    with (home / ".ssh" / "known_hosts").open("a") as f:
        f.write(f"[127.0.0.1]:{gpu_proxy.port} {kind} {key}\n")
    return made


@pytest.fixture
def sims(host, ssh, tmp_path):
    sims = SimHost(host, ssh, tmp_path)
    yield sims
    sims.pids += _servers(host)  # the restarted and relaunched ones too
    sims.stop()


def _servers(host: SshdServer) -> list[int]:
    return [p.pid for p in host.processes() if "sgwatch.sim" in _cmd(p.outside)]


def _cmd(pid: int) -> str:
    with contextlib.suppress(OSError):
        return command(pid)
    return ""


def _kept(host: SshdServer) -> list[str]:
    """What sgwatch keeps on the host (every process but the server and its helpers),
    each named by its command's last line (a host program's own last line: short)."""
    return sorted(
        cmd.strip().splitlines()[-1][:60]
        for _, cmd in host.remote_processes()
        if cmd.strip()  # not one that is exiting (its command line already gone)
        and "sgwatch.sim" not in cmd
        and not cmd.startswith(("sglang::", "VLLM::"))
    )


def _traffic(port: list[int], stop: threading.Event) -> None:
    """Requests one after another to the server at port[0] (a restart keeps the port; a
    new launch changes it)."""
    while not stop.is_set():
        try:
            generate(port[0], tokens=200)
        except (OSError, ValueError):  # restarted under it
            stop.wait(0.5)


async def test_fds_tasks_threads_and_host_processes_come_back_after_drops_and_restarts(
    host, gpu_proxy, env, sims, tmp_path
):
    log = tmp_path / "server.log"
    port = [await asyncio.to_thread(sims.launch, log, *QWEN, speed="50")]
    watch = Watch(ALIAS)
    session = Session(
        watch,
        partial(SshTransport, ALIAS, config=[str(Path(env["HOME"], ".ssh/config"))]),
        # as the CLI's: a server started later is followed; no gone servers' logs looked for
        options=Options(keep_looking=True, log_places=()),
    )
    ctl = Controller(session, History(ALIAS, tmp_path / "history"))
    app = SgwatchApp([watch], [lambda _w: session.run()], bell=False, controllers=[ctl])
    stop = threading.Event()
    threading.Thread(target=_traffic, args=(port, stop), daemon=True).start()

    def figures() -> dict:
        kept = _kept(host)
        return {
            "fds": len(os.listdir("/proc/self/fd")),
            "tasks": len(asyncio.all_tasks()),
            # asyncio's default executor (getaddrinfo on each reconnection) grows its
            # pool up to its bound and keeps it: not a leak, so not counted here
            "threads": sum(not t.name.startswith("asyncio_") for t in threading.enumerate()),
            # the connection's command shell (transport/shell.py: opened on first use,
            # then kept) may come in later than the base: at most one
            "host": [p for p in kept if p != "/bin/sh"],
            "one shell at most": kept.count("/bin/sh") <= 1,
        }

    def held() -> collections.Counter:
        """What the fds and tasks are (a socket, a pipe; a task's coroutine): named in a
        failure, to tell a slow release from a leak."""
        fds = []
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                fds.append("fd " + os.readlink(f"/proc/self/fd/{fd}").split("[")[0])
        tasks = [f"task {getattr(t.get_coro(), '__qualname__', t)}" for t in asyncio.all_tasks()]
        return collections.Counter(fds + tasks)

    async def steady() -> dict:
        """The figures most often seen over 5 s: the 5 s server check and a GPU poll's
        restart come and go, each with a task and a shell on the host."""
        seen = []
        for _ in range(20):
            seen.append(json.dumps(figures(), sort_keys=True))
            await pilot.pause(0.25)
        return json.loads(collections.Counter(seen).most_common(1)[0][0])

    def serving(other_than: int | None = None) -> bool:
        """Live and serving, on a server other than `other_than` (a pid) when given."""
        if not (watch.link == LIVE and watch.state.state == "serving"):
            return False
        return other_than is None or (
            session.server is not None and session.server.pid != other_than
        )

    async def back_to(base: dict, after: str) -> None:
        seen: list[dict] = []

        def same() -> bool:
            seen.append(now := figures())
            # fewer is no leak: the base may hold what was in flight then (a one-time
            # request's kept connection; on a loaded machine, a periodic check's task
            # for most of the 5 s)
            fewer = ("fds", "tasks")
            return {**now, **{k: base[k] for k in fewer}} == base and all(
                now[k] <= base[k] for k in fewer
            )

        try:
            await until(pilot, same, SETTLE_S)
        except AssertionError:
            extra = dict(held() - base_held)
            raise AssertionError(
                f"after {after}: {seen[-1]} instead of {base}; more than at the base: {extra}"
            ) from None

    async def reach(check, timeout: float, what: str) -> None:
        try:
            await until(pilot, check, timeout)
        except AssertionError:
            seen = f"link {watch.link}, state {watch.state.state}, server {session.server}"
            raise AssertionError(f"{what} not reached within {timeout} s ({seen})") from None

    try:
        async with app.run_test(size=(140, 45)) as pilot:
            await reach(serving, 120, "serving")
            await pilot.pause(2.0)  # the GPU poll and the server check started
            base = await steady()
            base_held = held()
            assert base["host"], "the session keeps its follower on the host"
            # Every stale link seen as it comes, not at a poll: a reconnect on a quiet
            # machine can end it between two looks.
            stales: list[Transition] = []
            watch.subscribe(
                lambda t: stales.append(t) if t.kind == LINK and t.link.kind is Link.STALE else None
            )
            for n in range(DROPS):
                before = len(stales)
                gpu_proxy.reset()
                await reach(lambda b=before: len(stales) > b, 30, f"stale {n + 1}")
                await reach(serving, 60, f"serving after drop {n + 1}")
                await back_to(base, f"drop {n + 1}")
            old = session.server.pid
            r = await asyncio.to_thread(
                sgwatch, env, "restart", ALIAS, "--set", "decode-log-interval=5", "--yes"
            )
            assert r.returncode == exitcodes.OK, r.stderr
            await reach(lambda: serving(old), 60, "serving after the restart")
            await back_to(base, "a restart with a flag edit")
            # a crash (the server SIGKILLed), then a new server onto the same log, which
            # the dashboard finds by looking again (keep_looking)
            crashed = session.server.pid
            host.killpg(crashed, signal.SIGKILL)
            await reach(lambda: watch.state.state == CRASHED, 30, "crashed")
            port[0] = await asyncio.to_thread(sims.launch, log, *QWEN, speed="50")
            await reach(lambda: serving(crashed), 90, "serving after a crash and a launch")
            await back_to(base, "a crash and a new launch")
            await app.action_quit()
    finally:
        stop.set()
