"""The warmups a fleet source cannot see, followed over SSH (a FleetSource around another).

Prometheus sees a starting server as a target that is down: vLLM and SGLang open
their HTTP port (and /metrics) only once the engine is ready. Each refresh, every
row that is not up (down, or warming or crashed by the inner source's account)
and maps to an SSH host is followed there with the live machinery, choosing on a
host with several servers the one on the row's port. Its row then says what the
log says: warming with the phase, capture N/M and ETA; crashed with the cause.
A row up again after a restart the source never saw down (`restarted_at`) is followed
until its log tells the warmup (`ready in 48s`). At most `at_once` hosts are followed
at a time; the rest queue, first down first served. A row that the inner source sees
up again is its own again and its tail is stopped; a tail whose session ended (host
unreachable, no server) or that has nothing current to say (the server on the row's
port is gone, or its run is over) is started again after `retry_s`, and a crash told
stays on the row until something newer is. See docs/design/fleet-follow.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from sgwatch.fleet.row import FleetRow, State
from sgwatch.fleet.source import FleetSnapshot, FleetSource
from sgwatch.fleet.tail import Starter, Tail, settle
from sgwatch.fleet.watched import measured, seen

AT_ONCE = 8  # hosts followed at a time
RETRY_S = 30.0  # a tail whose session ended is started again after this long
UP = ("serving", "idle")


def wanted(row: FleetRow) -> bool:
    """Whether SSH can tell more about `row` than its source: mapped to a host, and not
    up, or up but restarted without the source seeing it down (its warmup unseen)."""
    if row.host is None or row.state == "stale":
        return False
    return row.state not in UP or row.restarted_at is not None


class Followed:
    def __init__(
        self,
        inner: FleetSource,
        start: Starter,
        at_once: int = AT_ONCE,
        retry_s: float = RETRY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if at_once < 1:
            raise ValueError("at_once must be at least 1")
        self.inner = inner
        self.name = inner.name
        self._start = start
        self.at_once = at_once
        self._retry_s = retry_s
        self._clock = clock
        self._tails: dict[str, Tail] = {}
        self._queue: list[str] = []  # row keys waiting for a place, first come first
        self._shown: dict[str, tuple[State, float]] = {}  # state shown and since when (wall)
        self._spent: dict[str, float] = {}  # since when a tail has nothing current to say
        self._crashes: dict[str, FleetRow] = {}  # a row's last crash told, until it is up
        self._heard: dict[str, tuple[float, str]] = {}  # a restart's account, once told

    @property
    def following(self) -> list[str]:
        """The keys of the rows followed now (their sessions running)."""
        return [k for k, t in self._tails.items() if not t.ended]

    @property
    def queued(self) -> list[str]:
        return list(self._queue)

    async def snapshot(self) -> FleetSnapshot:
        snap = await self.inner.snapshot()
        if not snap.stale:  # a source that did not answer says nothing new: tails stay
            await self._update({r.key: r for r in snap.rows})
        rows = tuple(self._row(r) for r in snap.rows)
        self._shown = {r.key: self._shown[r.key] for r in rows}  # rows gone are forgotten
        for memo in (self._spent, self._crashes, self._heard):
            for key in set(memo) - set(self._shown):
                del memo[key]
        return replace(snap, rows=rows)

    async def settle(self, timeout: float) -> None:
        """Wait (up to `timeout` s) until every tail knows something: for a one-off look."""
        await settle(self._tails.values(), timeout)

    async def unscraped(self) -> tuple[str, ...]:
        return await self.inner.unscraped()

    async def close(self) -> None:
        for key in list(self._tails):
            await self._tails.pop(key).stop()
        self._queue.clear()
        await self.inner.close()

    async def _update(self, rows: dict[str, FleetRow]) -> None:
        want = [k for k, r in rows.items() if wanted(r) and not self._told_restart(r)]
        for key in set(self._tails) - set(want):
            await self._tails.pop(key).stop()
        self._queue = [k for k in self._queue if k in want]
        now = self._clock()
        for key in want:
            tail = self._tails.get(key)
            if (tail is None or self._done(key, tail, now)) and key not in self._queue:
                self._queue.append(key)
        while self._queue and len(self.following) < self.at_once:
            key = self._queue.pop(0)
            if (old := self._tails.pop(key, None)) is not None:
                await old.stop()
            row = rows[key]
            assert row.host is not None  # wanted() holds
            port = port_in(row.instance)
            self._tails[key] = Tail(self._start(row.host, port), self._clock, port)
            self._spent.pop(key, None)

    def _done(self, key: str, tail: Tail, now: float) -> bool:
        """Whether `tail` is to be started again, `retry_s` after it had nothing more to
        say of its row: its session ended, or it follows a server on another port (the
        row's is gone), or the run it followed is over (crashed, stopped): a server
        started again on the row's port is then found."""
        if tail.ended:
            return now - (tail.ended_at or now) >= self._retry_s
        if tail.elsewhere() is None and seen(tail.watch).state not in ("crashed", "down"):
            self._spent.pop(key, None)
            return False
        return now - self._spent.setdefault(key, now) >= self._retry_s

    def _told_restart(self, row: FleetRow) -> bool:
        heard = self._heard.get(row.key)
        return heard is not None and heard[0] == row.restarted_at and row.state in UP

    def _row(self, row: FleetRow) -> FleetRow:
        key, tail = row.key, self._tails.get(row.key)
        if row.state in UP:
            self._crashes.pop(key, None)
        if row.state in UP and row.restarted_at is not None:
            out = self._restart(row, tail)
        elif row.state not in UP and tail is not None:
            out = _told(row, tail)
            if out.state == "crashed":
                self._crashes[key] = out
            elif out.state == row.state and (was := self._crashes.get(key)) is not None:
                out = replace(  # nothing newer yet: the crash, as told
                    out,
                    state="crashed",
                    detail=was.detail,
                    engine=out.engine or was.engine,
                    model=out.model or was.model,
                )
        else:
            out = self._queued(row)
        return self._since(out, row)

    def _queued(self, row: FleetRow) -> FleetRow:
        if row.key not in self._queue:
            return row
        place = self._queue.index(row.key) + 1
        return replace(row, detail=_join(row.detail, f"queued to follow over SSH ({place})"))

    def _restart(self, row: FleetRow, tail: Tail | None) -> FleetRow:
        """A row up again after a restart the source never saw down: its warmup as the
        log tells it (`ready in 48s`), once the log is read to its end; a crash since."""
        assert row.restarted_at is not None
        heard = self._heard.get(row.key)
        if heard is not None and heard[0] == row.restarted_at:
            return replace(row, detail=_join(row.detail, heard[1]))
        if tail is None or tail.elsewhere() is not None:
            return self._queued(row)
        said = seen(tail.watch)
        if said.state in UP:
            self._heard[row.key] = (row.restarted_at, said.detail)  # its tail stops next
            return replace(row, detail=_join(row.detail, said.detail))
        if said.state == "crashed":
            return replace(row, state="crashed", detail=said.detail)
        return replace(row, detail=_join(row.detail, f"following over SSH: {said.detail}"))

    def _since(self, out: FleetRow, row: FleetRow) -> FleetRow:
        """`out` with changed_at of the state shown: the source's own while `out` shows
        the source's state, else when the state shown last changed."""
        shown = self._shown.get(out.key)
        if out.state == row.state and row.changed_at is not None:
            at = row.changed_at
        elif shown is not None and shown[0] == out.state:
            at = shown[1]
        else:
            at = time.time()
        self._shown[out.key] = (out.state, at)
        return replace(out, changed_at=at)


def _told(row: FleetRow, tail: Tail) -> FleetRow:
    """`row` as the host's log tells it."""
    w = tail.watch
    if (other := tail.elsewhere()) is not None:  # the host's one server is not this row's
        return replace(row, detail=_join(row.detail, f"SSH: {other}"))
    said = seen(w)
    filled = {k: v for k, v in measured(w).items() if v is not None and getattr(row, k) is None}
    if said.state in ("warming", "crashed"):
        return replace(row, state=said.state, detail=said.detail, **filled)
    if said.state in UP:  # ready by its log; the source has not scraped it up yet
        return replace(row, state="warming", detail=f"{said.detail}; not yet seen up", **filled)
    if said.state is None:
        return replace(row, detail=_join(row.detail, f"following over SSH: {said.detail}"))
    return replace(row, detail=_join(row.detail, f"SSH: {said.detail}"))


def port_in(instance: str) -> int | None:
    """The port of a scraped `host:port` (`[v6]:port`): the server's HTTP port."""
    _, colon, port = instance.rpartition(":")
    return int(port) if colon and port.isdigit() and not instance.endswith("]") else None


def _join(first: str, second: str) -> str:
    return f"{first}; {second}" if first else second
