"""A fleet of SSH hosts (a config group, `sgwatch @lab`): one row per host, from its log.

No Prometheus: each host is followed as the dashboard follows it (a Session, looking
again for a server when there is none or its run is over), and its row is what its
Watch says. The sessions start at the first snapshot; a host whose session ended
(unreachable) is tried again after `retry_s`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from sgwatch.fleet.row import FleetRow, State
from sgwatch.fleet.source import FleetSnapshot
from sgwatch.fleet.tail import Starter, Tail, settle
from sgwatch.fleet.watched import measured, seen

RETRY_S = 30.0


class SshGroup:
    def __init__(
        self,
        name: str,
        hosts: Sequence[str],
        start: Starter,
        retry_s: float = RETRY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not hosts:
            raise ValueError(f"the group {name} has no hosts")
        self.name = name
        self.hosts = list(dict.fromkeys(hosts))  # each once, in the order given
        self._start = start
        self._retry_s = retry_s
        self._clock = clock
        self._tails: dict[str, Tail] = {}
        self._shown: dict[str, tuple[State, float]] = {}

    async def snapshot(self) -> FleetSnapshot:
        now = self._clock()
        for host in self.hosts:
            tail = self._tails.get(host)
            if tail is None or (tail.ended and now - (tail.ended_at or now) >= self._retry_s):
                if tail is not None:
                    await tail.stop()
                self._tails[host] = Tail(self._start(host, None), self._clock)
        return FleetSnapshot(tuple(self._row(h) for h in self.hosts), fetched_at=time.time())

    async def settle(self, timeout: float) -> None:
        """Wait (up to `timeout` s) until every host's row knows something."""
        await settle(self._tails.values(), timeout)

    async def unscraped(self) -> tuple[str, ...]:
        return ()  # each host's row is there from the first refresh

    async def close(self) -> None:
        for host in list(self._tails):
            await self._tails.pop(host).stop()

    def _row(self, host: str) -> FleetRow:
        w = self._tails[host].watch
        said = seen(w)
        state: State = said.state or "down"  # nothing known yet: not up
        shown = self._shown.get(host)
        at = shown[1] if shown is not None and shown[0] == state else time.time()
        self._shown[host] = (state, at)
        return FleetRow(
            key=host,
            instance=host,
            state=state,
            job=self.name,
            host=host,
            detail=said.detail,
            changed_at=at,
            **measured(w),
        )
