"""Which log a session follows on its host, decided from one discovery.

In order: the log named (--log), the host's last run when no running server
writes it (its log written after every server started), the server asked for
(--pid), the one the user picks among several (the newest when they do not),
else the profile's log, else, with no server running, the log of one that is gone
(written in the last hour where people put logs: host/recent.py; several: the user
picks with --log). The notes it writes tell the user why.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from enum import StrEnum
from typing import Any

from sgwatch.config import HostProfile
from sgwatch.core.cmdline import masked, parse
from sgwatch.core.display import badge
from sgwatch.engines import all_engines, by_name
from sgwatch.live.ingest import LogIngest
from sgwatch.live.linkstate import FAILED
from sgwatch.live.watch import Watch
from sgwatch.remote.discover import PLACES, Discovery, GoneLog, ServerProcess, gone_logs
from sgwatch.remote.streamfollow import printed

# Asks the user which of several servers to watch; None: the newest.
Ask = Callable[[list[ServerProcess]], Awaitable[ServerProcess | None]]


class Unfollowed(StrEnum):
    """Why a session follows nothing though the host answered (Session.unfollowed)."""

    NO_SERVER = "no server"  # no server with a log, no log named, or a named log that never came
    AMBIGUOUS = "ambiguous"  # several servers (or logs of gone ones), no one to ask, none picked


class Choice:
    def __init__(
        self,
        watch: Watch,
        log: str | None,
        profile: HostProfile,
        ask: Ask | None,
        pid: int | None,
        since_now: bool,
        places: Sequence[str] = PLACES,
    ) -> None:
        self.watch = watch
        self.log = log  # --log overrides discovery
        self.profile = profile
        self.ask = ask
        self.pid = pid  # watch this server (the demo's, the one launched), whatever else runs
        # Only runs from now on (wait --since): older logs are not followed.
        self.since_now = since_now
        self.ambiguous = False  # several servers and no one to ask: nothing picked
        self.unreadable: str | None = None  # a server runs, but why its output cannot be read
        self._since: float | None = None  # the host's clock when first looked at
        self._older: set[str] = set()  # past logs last written before then
        self._places = places  # where the logs of servers that are gone are looked for
        self._looked = False  # for those logs: once, with the first discovery
        self._cut = False  # that look ran out of time: some places unseen

    def gone_request(self) -> dict[str, Any] | None:
        """What discovery is asked to look for the logs of servers that are gone with
        (remote/discover.py's gone_logs), the first time only and only when nothing
        else would say which log to follow: no --log, --pid or profile log, and not
        only runs from now on. None: not looked for."""
        if self._looked or self.log or self.pid is not None or self.since_now:
            return None
        self._looked = True
        if self.profile.log:
            return None
        return gone_logs([(e.name, e.markers) for e in all_engines()], self._places)

    async def pick(self, found: Discovery) -> tuple[str | None, ServerProcess | None]:
        """The log to follow and the server that writes it (None: a log alone);
        no log: nothing to follow now."""
        last = self._last_run(found)
        if last is not None:
            return last, None
        path, server = await self._choose(found.servers)
        self._cut = self._cut or found.recent_cut
        if path is None and not found.servers and found.recent:
            return self._gone(found), None
        return path, server

    def nothing(self) -> str:
        """Why there is nothing to follow, once the session gives up."""
        label = self.watch.label
        if self.pid is not None:
            return f"{label}: no server with pid {self.pid}"
        unseen = "; the look for logs of servers that are gone ran out of time" if self._cut else ""
        return self.unreadable or (
            f"{label}: no server running and no log to follow{unseen} "
            f"(pass --log PATH, or set hosts.{label}.log in the config)"
        )

    def looking(self, every: float) -> str:
        """What the host has while the session looks again every `every` seconds."""
        again = f"looking again every {every:g} s"
        if self.since_now:
            since = time.strftime("%H:%M:%S", time.localtime(self._since or time.time()))
            return f"no run on {self.watch.label} since {since}; {again}"
        return self.unreadable or f"no server running on {self.watch.label}; {again}"

    def _last_run(self, found: Discovery) -> str | None:
        """A log written after every running server started that none of them writes:
        the host's last run is over; show it, not an older server (a headless command
        never reports another server's READY). None: discovery decides."""
        if self.since_now and self._since is None:
            self._since = found.now  # the host's clock: its files' times are on it
        if self.log or self.pid is not None:
            return None
        servers = found.servers
        written = {s.log for s in servers if s.log}
        started = max((s.started_at or 0.0 for s in servers), default=0.0)
        since = self._since or 0.0
        self._older = {p.path for p in found.logs if p.mtime < since}
        over = [p for p in found.logs if p.path not in written and p.mtime > max(started, since)]
        if not over:
            return None
        last = max(over, key=lambda p: p.mtime)
        # A running server whose log discovery could not find may be the one writing it.
        self.watch.writer_gone = all(s.log for s in servers)
        running = ", ".join(str(s.pid) for s in servers)
        self.watch.note = (
            f"no server writes {last.path} now; its last run, written "
            f"{max(0.0, found.now - last.mtime):.0f} s ago"
            + (f" (also running: pid {running}; --pid N watches one)" if servers else "")
        )
        return last.path

    def _gone(self, found: Discovery) -> str | None:
        """With no server running, the log of one that is gone: the one found, or the
        one the user will pick (the newest on the dashboard); None: several and no one
        to ask."""
        label, logs = self.watch.label, found.recent
        listed = "\n".join(gone_line(log, found.now) for log in logs)
        if len(logs) > 1 and self.ask is None:
            self.ambiguous = True
            self.watch.link = FAILED  # before the note, as in _choose
            self.watch.note = (
                f"no server runs on {label}; {len(logs)} logs of servers that are gone, "
                f"written in the last hour (newest first); pick one with --log PATH:\n{listed}"
            )
            return None
        others = f"; others (pass --log PATH):\n{listed}" if len(logs) > 1 else ""
        self.watch.writer_gone = True
        self.watch.note = (
            f"no server runs on {label}: following the log of one that is gone, "
            f"{logs[0].path}, written {_ago(found.now - logs[0].mtime)} ago{others}"
        )
        return logs[0].path

    async def _choose(
        self, servers: list[ServerProcess]
    ) -> tuple[str | None, ServerProcess | None]:
        """--log, else the server the user picks (the newest when they do not), else the
        profile's log. No log: nothing to follow, or several servers and no one to ask."""
        if self.log:
            return self.log, None
        with_log = sorted((s for s in servers if readable(s)), key=lambda s: -s.start_time)
        if self.pid is not None:
            with_log = [s for s in with_log if s.pid == self.pid]
            servers = with_log
        if len(with_log) > 1 and self.ask is None:
            self.ambiguous = True  # no one to ask: guessing would watch the wrong one
            self.watch.link = FAILED  # before the note: the failure's event takes it as its reason
            self.watch.note = (
                f"{len(with_log)} servers on {self.watch.label}; pick one with --pid:\n"
                + described(with_log)
            )
            return None, None
        if with_log:
            picked = None
            if len(with_log) > 1 and self.ask is not None:
                picked = await self.ask(with_log)
            server = picked or with_log[0]
            self.watch.node = by_name(server.engine).node_of(parse(server.argv))
            if len(servers) > 1:
                others = ", ".join(str(s.pid) for s in servers if s is not server)
                self.watch.note = (
                    f"{len(servers)} servers on {self.watch.label}: following pid "
                    f"{server.pid}; others: {others}"
                )
            return output_of(server), server
        if servers:
            s = servers[0]
            why = s.source.problem if s.source else None
            why = why or "its output is not a file; pass --log PATH"
            self.unreadable = f"a server runs on {self.watch.label} (pid {s.pid}) but {why}"
            self.watch.note = self.unreadable
        return (None if self.profile.log in self._older else self.profile.log), None


def output_of(server: ServerProcess) -> str:
    """What is followed for a readable server: its log file, else its source's label."""
    return server.log or server.source.label


def readable(server: ServerProcess) -> bool:
    """Whether its output can be followed: a file, or a log a host command prints."""
    source = server.source
    return bool(server.log) or (source is not None and printed(source))


def source_label(host: str, path: str, server: ServerProcess | None) -> str:
    """What the header and `events` name as followed: "ct129: tee -> /root/serve.log
    (pid 4242)"; a file the server writes itself keeps the short "ct129:/path" form."""
    if server is None:
        return f"{host}:{path}"
    source = server.source
    where = f" {source.label}" if source and source.kind != "file" else path
    return f"{host}:{where} (pid {server.pid})"


def gone_line(log: GoneLog, now: float) -> str:
    """One line for a log of a server that is gone: path, when written, engine and
    the state its last lines show."""
    ingest = LogIngest(engine=log.engine)
    ingest.feed(log.tail.encode())
    ingest.flush()
    written = time.strftime("%H:%M:%S", time.localtime(log.mtime))
    state = badge(ingest.state.state).word
    return f"  {log.path}  {written} ({_ago(now - log.mtime)} ago)  {log.engine}  {state}"


def _ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def described(servers: list[ServerProcess]) -> str:
    """One line per server: its pid and its command (secrets masked)."""
    return "\n".join(f"  pid {s.pid}: {masked(parse(s.argv)).shell}" for s in servers)
