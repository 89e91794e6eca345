"""The warmups a fleet source cannot see, followed over SSH: simulated servers on the
test sshd, behind a scripted source that says what Prometheus would (down, then up)."""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import replace

from sgwatch.fleet.follow import Followed
from sgwatch.fleet.row import FleetRow
from sgwatch.fleet.source import FleetSnapshot
from sgwatch.fleet.tail import on_port
from sgwatch.live.options import Options
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from tests.fleet.rig import launch_on
from tests.integration.conftest import host, sims, ssh, sshd  # noqa: F401 (fixtures)
from tests.integration.headless import CRASH_KV, QWEN
from tests.integration.helpers import arun
from tests.integration.sshd import free_port

ALIAS = "gpu129"


class Scripted:
    """A fleet source whose rows the test sets, as Prometheus would report them."""

    name = "scripted"

    def __init__(self, rows: list[FleetRow]) -> None:
        self.rows = {r.key: r for r in rows}
        self.closed = False

    def say(self, key: str, **change) -> None:
        self.rows[key] = replace(self.rows[key], **change)

    async def snapshot(self) -> FleetSnapshot:
        return FleetSnapshot(tuple(self.rows.values()), fetched_at=time.time())

    async def close(self) -> None:
        self.closed = True


def down(key: str, port: int) -> FleetRow:
    """A target Prometheus cannot scrape, mapped to the sshd's host."""
    instance = f"127.0.0.1:{port}"
    return FleetRow(key=key, instance=instance, state="down", host=ALIAS, detail="refused")


def starter(ssh):  # noqa: F811
    def start(alias: str, port: int | None) -> Session:
        return Session(
            Watch(alias), lambda: ssh(alias), choose=on_port(port), options=Options(check_every=0.2)
        )

    return start


class Rows:
    """A front end's view: snapshots taken every 0.2 s, and each change of the rows."""

    def __init__(self, source: Followed) -> None:
        self.source = source
        self.went: list[dict[str, tuple[str, str]]] = []  # (state, detail) by key, per change

    async def until(self, check, timeout: float = 60) -> dict[str, FleetRow]:
        deadline = time.monotonic() + timeout
        while True:
            rows = {r.key: r for r in (await self.source.snapshot()).rows}
            shown = {k: (r.state, r.detail) for k, r in rows.items()}
            if not self.went or self.went[-1] != shown:
                self.went.append(shown)
            if check(rows):
                return rows
            assert time.monotonic() < deadline, f"not reached; the rows went {self.went}"
            await asyncio.sleep(0.2)

    def details(self, key: str) -> list[str]:
        return [shown[key][1] for shown in self.went if key in shown]


def test_a_down_target_warming_shows_its_phase_then_serving_once_up(ssh, sims, tmp_path):  # noqa: F811
    port = sims.launch(tmp_path / "a.log", *QWEN, speed="5")
    inner = Scripted([down("a", port)])
    arun(warming_then_serving(inner, Followed(inner, starter(ssh))), timeout=150)
    assert inner.closed


async def warming_then_serving(inner: Scripted, source: Followed) -> None:
    view = Rows(source)
    try:
        ready = await view.until(lambda r: "not yet seen up" in r["a"].detail, timeout=90)
        assert ready["a"].state == "warming"  # ready by its log, not yet by the source
        assert ready["a"].engine == "sglang" and ready["a"].model == "Qwen/Qwen3-8B"
        assert source.following == ["a"]
        # on the way: the phase, and the capture's N/M (QWEN captures 6 batch sizes)
        assert any(re.fullmatch(r"graphs \d/6( ETA \w+)?", d) for d in view.details("a")), view.went

        inner.say("a", state="idle", detail="")
        up = await view.until(lambda r: r["a"].state == "idle")
        assert up["a"].detail == ""  # the source's own row again
        assert source.following == []  # its tail is stopped
    finally:
        await source.close()


def test_a_target_that_crashes_shows_the_cause_from_its_log(ssh, sims, tmp_path):  # noqa: F811
    port = sims.launch(tmp_path / "c.log", *CRASH_KV, speed="3")
    arun(crashed(Followed(Scripted([down("c", port)]), starter(ssh))), timeout=100)


async def crashed(source: Followed) -> None:
    try:
        view = Rows(source)
        rows = await view.until(lambda r: r["c"].state == "crashed", timeout=80)
        assert rows["c"].detail.startswith("KV cache: RuntimeError: Not enough memory. ")
        assert any(d.lower().startswith("weights") for d in view.details("c")), view.went
    finally:
        await source.close()


def test_at_most_n_at_once_the_rest_queue(ssh, sims, tmp_path):  # noqa: F811
    first = sims.launch(tmp_path / "a.log", *QWEN, speed="3")
    second = sims.launch(tmp_path / "b.log", *QWEN, speed="3")
    inner = Scripted([down("a", first), down("b", second)])
    arun(queued(inner, Followed(inner, starter(ssh), at_once=1), second), timeout=120)


async def queued(inner: Scripted, source: Followed, second: int) -> None:
    view = Rows(source)
    try:
        rows = await view.until(lambda r: r["a"].state == "warming")
        assert source.following == ["a"] and source.queued == ["b"]
        assert rows["b"].state == "down"
        assert rows["b"].detail == "refused; queued to follow over SSH (1)"

        inner.say("a", state="serving", detail="")  # a place frees up
        await view.until(lambda r: r["b"].state == "warming")
        assert source.following == ["b"] and source.queued == []
        tail = source._tails["b"]
        assert tail.session.server is not None and f"--port {second}" in " ".join(
            tail.session.server.argv
        )  # the server on the row's port, of the two on that host
    finally:
        await source.close()


def test_the_hosts_only_server_on_another_port_is_not_taken_for_the_row(ssh, sims, tmp_path):  # noqa: F811
    other = sims.launch(tmp_path / "o.log", *QWEN, speed="50")
    mine = free_port()  # nothing listens there: this target's server is gone
    arun(elsewhere(Followed(Scripted([down("m", mine)]), starter(ssh)), mine, other), timeout=60)


async def elsewhere(source: Followed, mine: int, other: int) -> None:
    try:
        rows = await Rows(source).until(lambda r: "SSH: no server on port" in r["m"].detail)
        assert rows["m"].state == "down" and rows["m"].engine is None  # nothing of the other's
        assert rows["m"].detail.startswith(f"refused; SSH: no server on port {mine} (pid ")
        assert rows["m"].detail.endswith(f" listens on {other})")
    finally:
        await source.close()


def test_a_crash_stays_on_the_row_until_its_port_has_a_server_again(ssh, sims, tmp_path):  # noqa: F811
    sims.launch(tmp_path / "o.log", *QWEN, speed="50")  # another target's server there
    port = free_port()

    def launch(log: str, *args: str, speed: str) -> None:
        made = launch_on(sims.ssh(ALIAS), sims.folder, tmp_path / log, port, speed, *args,
                         state=sims.state)  # fmt: skip
        sims.pids.append(arun(made))

    started: list[int | None] = []

    def start(alias: str, on: int | None) -> Session:
        started.append(on)
        return starter(ssh)(alias, on)

    launch("c.log", *CRASH_KV, speed="10")
    source = Followed(Scripted([down("c", port)]), start, retry_s=0.5)
    arun(crash_then_again(source, started, lambda: launch("a.log", *QWEN, speed="5")), timeout=150)


async def crash_then_again(source: Followed, started: list, again) -> None:
    view = Rows(source)
    try:
        rows = await view.until(lambda r: r["c"].state == "crashed", timeout=80)
        cause = rows["c"].detail
        assert cause.startswith("KV cache: RuntimeError: Not enough memory. ")
        # its run over, the host is looked at again: only the other's server runs there
        n = len(started)
        rows = await view.until(
            lambda _r: len(started) > n and source._tails["c"].elsewhere() is not None
        )
        assert (rows["c"].state, rows["c"].detail) == ("crashed", cause)  # kept meanwhile
        assert rows["c"].engine == "sglang"
        await asyncio.to_thread(again)  # started again on its port, as a service manager would
        await view.until(lambda r: r["c"].state == "warming", timeout=60)
    finally:
        await source.close()
