"""Drops on an established link: isolated ones, a burst, a half-open link.

Four sessions in discovery mode follow a server whose log lines are numbered, each
over its own connection through the fault proxy. Every drop must be reported stale
(with its cause) then live by every session, following must resume quickly, and
at the end each session has shown every line once and in order. Schedules come
from the `seed` fixture (SGWATCH_FAULT_SEED replays one). With SGWATCH_FAULT_FIGURES
set to a file, each test appends its measurements there as a JSON line
(docs/RELIABILITY.md is made from them).
"""

from __future__ import annotations

import asyncio
import random
import statistics
from functools import partial

from sgwatch.live.linkstate import LIVE
from sgwatch.live.session import Session
from sgwatch.live.transition import LINK
from sgwatch.live.watch import Watch
from sgwatch.transport.ssh import DETECT_WITHIN, SshTransport
from tests.fault.conftest import ALIAS, figures
from tests.fault.hostside import NumberedServer
from tests.integration.helpers import arun, until

FOLLOWERS = 4
DROPS = 20
RESUME_WITHIN = 5.0  # seconds, after an isolated drop and after a burst


class Follower:
    """One discovery-mode session and what a user of it would notice."""

    def __init__(self, cfg, pid: int) -> None:
        self.watch = Watch(ALIAS)
        self.session = Session(self.watch, partial(SshTransport, ALIAS, config=[str(cfg)]), pid=pid)
        self.links: list[tuple[float, str]] = []  # (loop time, link) for each change
        self.shown: list[str] = []
        self.mark = 0  # lines shown at the last drop
        self.watch.subscribe(self._on)
        self.task: asyncio.Task | None = None

    def _on(self, t) -> None:
        if t.kind == LINK and not t.past:
            self.links.append((asyncio.get_running_loop().time(), str(t.link)))

    def start(self) -> None:
        self.task = asyncio.create_task(self.session.run())

    def take(self) -> list[str]:
        self.shown.extend(self.watch.take_lines()[0])
        return self.shown

    @property
    def live(self) -> bool:
        self.take()
        return self.watch.link == LIVE

    def stale_count(self) -> int:
        return sum(v.startswith("stale") for _, v in self.links)

    def live_after(self, t: float) -> float | None:
        """Seconds from `t` to the first `live` after it."""
        later = [at for at, v in self.links if at >= t and v == "live"]
        return later[0] - t if later else None

    async def stop(self) -> None:
        assert self.task is not None
        assert not self.task.done(), self.task.exception()
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def followed(server: NumberedServer, cfg, body) -> list[Follower]:
    """Run `body(followers)` with FOLLOWERS live sessions, then check every line."""
    followers = [Follower(cfg, server.pid) for _ in range(FOLLOWERS)]
    for f in followers:
        f.start()
    try:
        await until(lambda: all(f.live and f.shown for f in followers), 30)
        await body(followers)
        await until(lambda: all(f.live for f in followers), 30)
        written = await asyncio.to_thread(server.finish)
        await until(lambda: all(len(f.take()) >= len(written) for f in followers), 30)
        for f in followers:
            assert f.shown == written  # every line once, in order
            assert f.watch.state.state != "crashed"
    finally:
        for f in followers:
            await f.stop()
    return followers


def test_isolated_drops_are_each_reported_and_resumed(host, proxy, flaky_config, tmp_path, seed):
    rng = random.Random(seed)
    server = NumberedServer(host, tmp_path)
    drops: list[float] = []
    how: list[str] = []

    async def body(followers: list[Follower]) -> None:
        loop = asyncio.get_running_loop()
        for _ in range(DROPS):
            # isolated: each link is back and has carried new lines since the last drop
            await until(lambda: all(f.live and len(f.shown) > f.mark for f in followers), 5)
            await asyncio.sleep(rng.uniform(0.0, 0.3))  # at a random moment of the stream
            for f in followers:
                f.mark = len(f.take())
            drops.append(loop.time())
            if rng.random() < 0.5:
                how.append("reset")
                proxy.reset()  # RST between client and sshd
            else:
                how.append("sshd killed")
                await asyncio.to_thread(host.kill_connections)
            await until(lambda: all(f.stale_count() == len(drops) for f in followers), 10)

    try:
        followers = arun(followed(server, flaky_config, body), timeout=150)
    finally:
        server.kill()
    resumes = []
    for f in followers:
        stale = [v for _, v in f.links if v.startswith("stale")]
        assert len(stale) == DROPS  # each drop reported, by each session
        assert all("connection lost" in v for v in stale), stale
        resumes += [f.live_after(t) for t in drops]
    assert None not in resumes
    assert max(resumes) < RESUME_WITHIN
    figures(
        test="isolated",
        seed=seed,
        followers=FOLLOWERS,
        drops=DROPS,
        reported=sum(f.stale_count() for f in followers),
        resume_median=statistics.median(resumes),
        resume_max=max(resumes),
    )


def test_a_burst_of_drops_resumes_within_seconds_of_the_last(
    host, proxy, flaky_config, tmp_path, seed
):
    rng = random.Random(seed)
    server = NumberedServer(host, tmp_path)
    last: list[float] = []

    async def body(followers: list[Follower]) -> None:
        loop = asyncio.get_running_loop()
        for _ in range(DROPS):  # each one before the sessions are all back
            if rng.random() < 0.5:
                proxy.reset()
            else:
                await asyncio.to_thread(host.kill_connections)
            await asyncio.sleep(rng.uniform(0.05, 0.4))
        last.append(loop.time())
        proxy.reset()  # the last drop
        await until(lambda: all(f.live_after(last[0]) is not None for f in followers), 20)

    try:
        followers = arun(followed(server, flaky_config, body), timeout=150)
    finally:
        server.kill()
    resumes = [f.live_after(last[0]) for f in followers]
    assert max(resumes) < RESUME_WITHIN, resumes
    for f in followers:  # every outage it saw ended live; none was a crash
        assert f.links[-1][1] == "live"
    figures(
        test="burst", seed=seed, resume_median=statistics.median(resumes), resume_max=max(resumes)
    )


def test_a_half_open_link_is_noticed_by_keepalive(host, proxy, flaky_config, tmp_path):
    """Packets silently dropped, no RST: only keepalive can tell. With no ServerAlive*
    in the user's config sgwatch's own keepalive notices within 15 s."""
    server = NumberedServer(host, tmp_path)
    blocks = flaky_config.read_text().split("\n\n")
    blocks[0] = "\n".join(line for line in blocks[0].splitlines() if "ServerAlive" not in line)
    cfg = tmp_path / "ssh_config_default_keepalive"
    cfg.write_text("\n\n".join(blocks))
    noticed: list[float] = []

    async def body(followers: list[Follower]) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        proxy.black_hole_now()
        await until(lambda: all(f.stale_count() for f in followers), 25)
        noticed.extend(f.links[-1][0] - start for f in followers)
        proxy.heal()

    try:
        followers = arun(followed(server, cfg, body), timeout=150)
    finally:
        server.kill()
    for f in followers:
        (stale,) = [v for _, v in f.links if v.startswith("stale")]
        assert "keepalive" in stale, stale
    assert max(noticed) <= DETECT_WITHIN + 1.0, noticed
    figures(test="half-open", detect_median=statistics.median(noticed), detect_max=max(noticed))
