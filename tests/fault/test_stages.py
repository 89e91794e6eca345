"""The link cut at every point of a session: each failure is the transport's own error.

The proxy cuts a connection once sshd has sent it N bytes; sweeping N over a whole
session's bytes drops the link during the handshake, the shell's start, a short
command, a command with input, a stream's start and its reading, a port forward.
Whatever the point, sgwatch must see a TransportError (one line for the user), never
asyncssh's or the OS's exceptions, which escaped as tracebacks and a "crashed" exit.
"""

from __future__ import annotations

import asyncio
import itertools
from functools import partial

from sgwatch.live.linkstate import LIVE, Link
from sgwatch.live.options import Options
from sgwatch.live.session import Session
from sgwatch.live.transition import LINK
from sgwatch.live.watch import Watch
from sgwatch.transport.errors import TransportError
from sgwatch.transport.ssh import SshTransport
from tests.fault.conftest import ALIAS
from tests.fault.hostside import NumberedServer
from tests.integration.helpers import arun, until

STEPS = ("connect", "shell", "run", "input", "stream start", "stream read", "forward", "end")


async def one_session(cfg, sshd_port: int, done: list[str], before=lambda step: None) -> None:
    """Every kind of await a session makes, in order: `before(step)` is called as each
    step starts, and `done` gets each step completed."""

    def step(name: str) -> None:
        if done or name != "connect":
            done.append(STEPS[STEPS.index(name) - 1])
        before(name)

    t = SshTransport(ALIAS, config=[str(cfg)])
    try:
        step("connect")
        await t.connect()
        step("shell")
        assert (await t.run("echo $$")).ok
        step("run")
        assert (await t.run("echo two")).stdout == b"two\n"
        step("input")
        assert (await t.run("cat", input=b"x" * 5000)).stdout == b"x" * 5000
        step("stream start")
        s = await t.stream("head -c 300000 /dev/zero")
        step("stream read")
        got = 0
        while data := await s.read():
            got += len(data)
        await s.close()
        assert got == 300_000
        step("forward")
        await t.forward(sshd_port)  # local only: sshd hears of it at the first connection
        step("end")
        assert (await t.run("echo end")).ok
        done.append("end")
    finally:
        await t.close()


def test_a_cut_in_any_step_of_a_session_is_a_transport_error(host, proxy, flaky_config):
    cut_within: set[str] = set()  # the step each cut interrupted
    for target in STEPS[:-2]:
        for k in (0, 50, 300, 1000):

            def arm(name: str, target=target, k=k) -> None:
                if name == target:  # cut k bytes into this step's replies
                    proxy.cut_after = k + (proxy.last.down_bytes if name != "connect" else 0)

            done: list[str] = []
            try:
                arun(one_session(flaky_config, host.port, done, arm), timeout=30)
            except TransportError as e:
                assert str(e).startswith(f"{ALIAS}: "), e  # one line naming the host
                cut_within.add(STEPS[len(done)])
            finally:
                proxy.cut_after = None
    assert set(STEPS[:-2]) <= cut_within, cut_within


def test_a_discovering_session_cut_at_every_stage_recovers_with_every_line(
    host, proxy, flaky_config, tmp_path
):
    """A session in discovery mode (no --log) whose every connection is cut after N
    bytes, for N across discovery, the log stream and the server check: it never
    dies, says stale and live each time, and once the link holds shows every line."""
    server = NumberedServer(host, tmp_path)
    watch = Watch(ALIAS)
    links: list[str] = []
    watch.subscribe(lambda t: links.append(str(t.link)) if t.kind == LINK and not t.past else None)
    make = partial(SshTransport, ALIAS, config=[str(flaky_config)])
    # other servers may run here; the server check's shell runs often enough to be cut
    session = Session(watch, make, pid=server.pid, options=Options(check_every=0.2))
    shown: list[str] = []

    def take() -> list[str]:
        shown.extend(watch.take_lines()[0])
        return shown

    async def body() -> list[str]:
        task = asyncio.create_task(session.run())
        try:
            await until(lambda: (watch.link == LIVE and take()) or task.done(), 30)
            assert watch.link == LIVE, (watch.link, watch.note)
            for n in (2000, 3500, 5000, 8000, 12000, 20000, 40000):
                proxy.cut_after = n
                proxy.reset()
                await until(lambda: watch.link.kind is Link.STALE or task.done(), 20)
                await asyncio.sleep(0.3)  # a few cut connections at this stage
                assert not task.done(), task.exception()
            proxy.cut_after = None
            proxy.reset()
            await until(lambda: watch.link == LIVE and take(), 30)
            written = await asyncio.to_thread(server.finish)
            await until(lambda: len(take()) >= len(written), 30)
            assert not task.done()
            return written
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    try:
        written = arun(body(), timeout=120)
    finally:
        server.kill()
    assert shown == written  # every line once, in order
    assert watch.state.state != "crashed"
    stale = [v for v in links if v.startswith("stale")]
    assert stale, links  # (a link cut again before it was up stays one outage)
    assert all(": connection lost" in v or "cannot connect" in v for v in stale), stale
    # every stale is followed by its live again
    assert links[-1] == "live" and all(
        b == "live" for a, b in itertools.pairwise(links) if a.startswith("stale")
    )


def test_a_session_cut_during_its_first_discovery_recovers(host, proxy, flaky_config, tmp_path):
    """The host answered, then the link dropped while discovery ran: the session says
    stale and tries again, instead of giving the host up as unreachable."""
    server = NumberedServer(host, tmp_path)
    watch = Watch(ALIAS)
    session = Session(
        watch, partial(SshTransport, ALIAS, config=[str(flaky_config)]), pid=server.pid
    )

    async def body() -> None:
        proxy.cut_up_after = 6000  # after the handshake, inside discovery's program
        task = asyncio.create_task(session.run())
        try:
            await until(lambda: watch.link.kind is Link.STALE or task.done(), 20)
            assert not task.done() and "connection lost" in watch.link.cause, watch.link
            await until(lambda: proxy.accepted >= 3, 20)  # tried again, and again
            proxy.cut_up_after = None
            await until(lambda: watch.link == LIVE or task.done(), 30)
            assert watch.link == LIVE, (watch.link, watch.note)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    try:
        arun(body(), timeout=90)
    finally:
        server.kill()
