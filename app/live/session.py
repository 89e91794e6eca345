"""One watched host: connect, find the server, follow its log and the GPUs into a Watch.

The dashboard runs `Session.run` as a worker per host; headless commands will
run the same coroutine. Nothing here draws: it only updates the Watch
(`link`, `note`, `source`, fed bytes), which the screen reads on its timer.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from sgwatch.config import HostProfile
from sgwatch.core.cmdline import masked, parse
from sgwatch.engines import by_name, of_log, process_patterns
from sgwatch.live.ingest import LogIngest
from sgwatch.live.pastsplit import SPLIT_FROM, PastSplit, start_split
from sgwatch.live.watch import Watch
from sgwatch.remote.discover import Discovery, DiscoveryFailed, ServerProcess, discover
from sgwatch.remote.gpustream import GpuData, GpuStream, GpuUnavailable
from sgwatch.remote.logfollow import (
    LogData,
    LogDetached,
    LogFailed,
    LogFollower,
    LogMissing,
    LogNote,
    LogOpened,
    LogTail,
)
from sgwatch.remote.streamfollow import printed, source_follower
from sgwatch.transport.base import Transport
from sgwatch.transport.errors import LinkLost, TransportError
from sgwatch.transport.link import Link, LinkDown, LinkUp

SERVER_CHECK_S = 5.0
HISTORY_SLICE = 1 << 16  # bytes of a long log's past parsed between two looks at the keys
_OVER = ("crashed", "stopped")
# Asks the user which of several servers to watch; None: the newest.
Chooser = Callable[[list[ServerProcess]], Awaitable[ServerProcess | None]]
# Why a session follows nothing though the host answered (Session.unfollowed).
NO_SERVER = "no server"  # no server with a log, no log named, or a named log that never came
AMBIGUOUS = "ambiguous"  # several servers, no one to ask and no pid to pick one
JOINED, READ_AGAIN = "joined", "read again"  # Session.past_split


class Session:
    def __init__(
        self,
        watch: Watch,
        make_transport: Callable[[], Transport],
        log: str | None = None,
        profile: HostProfile | None = None,
        choose: Chooser | None = None,
        pid: int | None = None,
        missing_log_grace: float | None = None,
    ) -> None:
        self.watch = watch
        self._make = make_transport
        self.link = Link(make_transport)
        self.log = log  # --log overrides discovery
        self.profile = profile or HostProfile()
        self.choose = choose
        self.pid = pid  # watch this server (the demo's), whatever else runs
        # A log named (--log, the profile) that is missing this long, never having been
        # opened, ends the session (None: wait for it as long as the session runs).
        self.missing_log_grace = missing_log_grace
        self.unfollowed: str | None = None  # NO_SERVER or AMBIGUOUS once the session gave up
        self.check_every = SERVER_CHECK_S
        self.restarting = False  # a restart stops the server on purpose: not a crash
        self.server: ServerProcess | None = None
        self.unreadable: str | None = None  # a server runs, but why its output cannot be read
        self.past_logs: list[str] = []  # logs of earlier runs here (the history's), newest first
        # Only runs from now on (wait --since): older logs are not followed, and with no
        # server the host is looked at again every check_every seconds.
        self.since_now = False
        # With nothing to follow, look again every check_every seconds (the dashboard)
        # instead of giving up.
        self.keep_looking = False
        self._since: float | None = None  # the host's clock when first looked at
        self._older: set[str] = set()  # past logs last written before then
        self.python = ""  # the host's Python that discovery ran with
        self.split_from = SPLIT_FROM  # a past this long is read by two processes at once
        self._split: tuple[PastSplit, LogIngest] | None = None  # and the rest's ingest
        # How the last past read in two parts was joined: JOINED, or READ_AGAIN (not
        # exact, or the worker failed: the rest, or all, read here after all).
        self.past_split: str | None = None
        # With no server running, offer to start the profile's launch command (the
        # dashboard sets this; a headless command never waits for a launch).
        self.offer_launch = False
        self.launch_offered = asyncio.Event()  # set while the offer stands
        self._launch: asyncio.Future[int] | None = None

    def again(self, pid: int | None = None) -> Session:
        """A new session to the same host with the same settings, from scratch."""
        session = Session(
            Watch(self.watch.label),
            self._make,
            self.log,
            self.profile,
            self.choose,
            pid,
            self.missing_log_grace,
        )
        session.past_logs, session.since_now = self.past_logs, self.since_now
        return session

    async def run(self) -> None:
        w = self.watch
        try:
            found = await self._discover(await self.first_connection())
            self.python = found.python
            if self.offer_launch and self.profile.launch and not found.servers and not self.log:
                self.pid = await self._wait_for_launch()
                found = await self._discover(await self.link.connected())
        except (TransportError, DiscoveryFailed) as e:
            w.link, w.note = "failed", str(e)
            await self.link.close()
            return
        path = self._last_run(found) or await self._choose(found.servers)
        while path is None and (self.since_now or self.keep_looking) and self.unfollowed is None:
            w.link, w.note = "no server", self._looking()
            await asyncio.sleep(self.check_every)
            try:
                found = await self._discover(await self.link.connected())
            except DiscoveryFailed:
                continue
            except TransportError as e:
                w.link, w.note = "failed", str(e)
                await self.link.close()
                return
            path = self._last_run(found) or await self._choose(found.servers)
        if path is None:
            w.link = "failed"  # before the note: the failure's event takes it as its reason
            if self.unfollowed is None:
                self.unfollowed = NO_SERVER
                w.note = (
                    f"{w.label}: no server with pid {self.pid}"
                    if self.pid is not None
                    else self.unreadable
                    or f"{w.label}: no SGLang server running and no log to follow "
                    f"(pass --log PATH, or set hosts.{w.label}.log in the config)"
                )
            await self.link.close()
            return
        w.source = source_label(w.label, path, self.server)
        if self.server is not None and self.server.engine_version:
            w.engine_version = self.server.engine_version
        gpus = asyncio.ensure_future(
            self._follow_gpus()
            if found.gpus or not found.gpu_error
            else self._no_gpus(found.gpu_error)
        )
        try:
            while True:  # a new server once the followed run is over (keep_looking)
                new = await self._follow_run(path, found.python, gpus)
                path = self._adopt(new, path)
        finally:
            gpus.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await gpus
            await self.link.close()

    async def _follow_run(self, path: str, python: str, gpus: asyncio.Future) -> ServerProcess:
        """Follow `path`, checking its server, until a new server started once the run
        was over (keep_looking): that server. A failure of either, or of the GPU
        stream, ends the session as it is raised."""
        follow = asyncio.ensure_future(self._follow_log(path, python))
        check = asyncio.ensure_future(self._check_server(path))
        try:
            done, _ = await asyncio.wait({follow, check, gpus}, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            for task in (follow, check):
                task.cancel()
            await asyncio.gather(follow, check, return_exceptions=True)
        for task in done:
            if isinstance(error := task.exception(), _Started):
                return error.server
            if error is not None:
                raise error
        raise AssertionError("unreachable: the checker only returns by raising")

    def _adopt(self, server: ServerProcess, old: str) -> str:
        """Follow `server`, started after the run followed until now was over."""
        w = self.watch
        self.server = server
        w.node = by_name(server.engine).node_of(parse(server.argv))
        path = output_of(server)
        w.new_file(f"left: a new server (pid {server.pid}) writes {path}")
        w.source = source_label(w.label, path, server)
        if server.engine_version:
            w.engine_version = server.engine_version
        w.note = f"a new server started: pid {server.pid}; the run of {old} was over"
        return path

    async def first_connection(self) -> Transport:
        """A host that cannot be reached fails at once; a connection that the host took
        and that dropped during its handshake (LinkLost) is a drop like any later one:
        reported stale and made again, for as long as the caller waits."""
        try:
            return await self.link.connect()
        except LinkLost as e:
            self.watch.link = f"stale: {e}"
            return await self.link.connected()

    async def _discover(self, transport: Transport) -> Discovery:
        """Discovery; a link that drops meanwhile (the host had answered) is reported
        stale, made again and discovery run again, as following does after a drop."""
        while True:
            try:
                return await discover(transport, process_patterns(), logs=self._past_logs())
            except LinkLost as e:
                self.watch.link = f"stale: {e}"
                await self.link.lost(transport)
                transport = await self.link.connected()

    async def _wait_for_launch(self) -> int:
        """Offer the profile's launch command; the pid it started as (`launched`)."""
        w = self.watch
        w.link = "no server"
        w.note = (
            f"no SGLang server running on {w.label}; "
            f"hosts.{w.label}.launch can start one: {self.profile.launch}"
        )
        self._launch = asyncio.get_running_loop().create_future()
        self.launch_offered.set()
        try:
            return await self._launch
        finally:
            self.launch_offered.clear()

    def launched(self, pid: int) -> None:
        """The launch command started as `pid` (Controller.launch): find it and follow it."""
        if self._launch is not None and not self._launch.done():
            self._launch.set_result(pid)

    def _looking(self) -> str:
        """What the host has while the session looks again for a server."""
        every = f"looking again every {self.check_every:g} s"
        if self.since_now:
            since = time.strftime("%H:%M:%S", time.localtime(self._since or time.time()))
            return f"no run on {self.watch.label} since {since}; {every}"
        return self.unreadable or f"no SGLang server running on {self.watch.label}; {every}"

    def _past_logs(self) -> list[str]:
        """Logs a server wrote on this host before: the profile's, then the callers'."""
        return [p for p in [self.profile.log, *self.past_logs] if p]

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
        running = ", ".join(str(s.pid) for s in servers)
        self.watch.note = (
            f"no server writes {last.path} now; its last run, written "
            f"{max(0.0, found.now - last.mtime):.0f} s ago"
            + (f" (also running: pid {running}; --pid N watches one)" if servers else "")
        )
        return last.path

    async def _choose(self, servers: list[ServerProcess]) -> str | None:
        """The log to follow: --log, else the server the user picks (the newest when
        they do not), else the profile's. None: nothing to follow, or several servers
        and no one to ask (AMBIGUOUS)."""
        if self.log:
            return self.log
        with_log = sorted((s for s in servers if readable(s)), key=lambda s: -s.start_time)
        if self.pid is not None:
            with_log = [s for s in with_log if s.pid == self.pid]
            servers = with_log
        if len(with_log) > 1 and self.choose is None:
            self.unfollowed = AMBIGUOUS  # no one to ask: guessing would watch the wrong one
            self.watch.link = "failed"  # before the note, as in run()
            self.watch.note = (
                f"{len(with_log)} servers on {self.watch.label}; pick one with --pid:\n"
                + described(with_log)
            )
            return None
        if with_log:
            picked = None
            if len(with_log) > 1 and self.choose is not None:
                picked = await self.choose(with_log)
            self.server = picked or with_log[0]
            self.watch.node = by_name(self.server.engine).node_of(parse(self.server.argv))
            if len(servers) > 1:
                others = ", ".join(str(s.pid) for s in servers if s is not self.server)
                self.watch.note = (
                    f"{len(servers)} servers on {self.watch.label}: following pid "
                    f"{self.server.pid}; others: {others}"
                )
            return output_of(self.server)
        if servers:
            s = servers[0]
            why = s.source.problem if s.source else None
            why = why or "its output is not a file; pass --log PATH"
            self.unreadable = f"a server runs on {self.watch.label} (pid {s.pid}) but {why}"
            self.watch.note = self.unreadable
        return None if self.profile.log in self._older else self.profile.log

    async def _follow_log(self, path: str, python: str) -> None:
        w = self.watch
        source = self.server.source if self.server is not None and not self.log else None
        if source is not None and printed(source):
            follower = source_follower(self.link, source, python)
        else:
            pid = self.server.pid if self.server is not None else None
            follower = LogFollower(self.link, path, python, pid)
        give_up = asyncio.timeout(None)
        try:
            async with give_up:
                await self._read_log(follower, path, give_up)
        except TimeoutError:
            if not give_up.expired():
                raise
            self.unfollowed = NO_SERVER
            w.link = "failed"  # before the note, as in run()
            w.note = f"{w.label}: {path} still does not exist after {self.missing_log_grace:g} s"
            return
        if w.link == "live":
            w.end()
            w.link = "ended"

    async def _feed(self, data: bytes) -> None:
        """Feed the Watch; a long log's past in slices with the event loop run between
        them, so keys are answered while it is parsed (a frame holds up to 1 MiB)."""
        w = self.watch
        if w.history is not None and self._split is not None:
            data = await self._feed_split(data)
        if w.history is None:
            w.feed(data)
            return
        await _in_slices(w.feed, data)

    async def _split_past(self, end: int) -> None:
        """A long past (`end` bytes) whose tail named its engine: its first part to a
        worker process, the rest read here (live/pastsplit.py)."""
        self._drop_split()
        w = self.watch
        if end < self.split_from or w.state.engine is None:
            return
        engine = of_log(w.state.engine)
        if (split := await start_split(end, engine.split_prefix)) is not None:
            self._split = split, w.split_past(engine.name)

    async def _feed_split(self, data: bytes) -> bytes:
        """Route the past's bytes in `data`; once it is all read and joined, what follows."""
        assert self._split is not None and self.watch.history is not None
        w, (split, rest) = self.watch, self._split
        read, end = w.history
        past, after = data[: end - read], data[end - read :]
        here = split.route(past)
        if len(past) > len(here):
            w.read_elsewhere(len(past) - len(here))
        await _in_slices(w.feed, here)
        if w.history[0] < end:
            return b""
        try:
            first = await split.first_part()
            self.past_split = JOINED
            if first is None:  # the worker failed: read its part here
                first, self.past_split = LogIngest(), READ_AGAIN
                for block in split.first_bytes():
                    await _in_slices(first.feed, block)
            if not first.extend(rest):  # not exact: read the rest again after it
                self.past_split = READ_AGAIN
                for block in split.rest_bytes():
                    await _in_slices(first.feed, block)
        finally:
            self._drop_split()
        w.join_past(first)
        return after

    def _drop_split(self) -> None:
        if self._split is not None:
            self._split[0].close()
            self._split = None

    async def _read_log(self, follower: LogFollower, path: str, give_up: asyncio.Timeout) -> None:
        """Feed the log's events into the Watch; `give_up` fires while a named log that
        was never opened stays missing longer than `missing_log_grace`."""
        try:
            await self._read_events(follower, path, give_up)
        finally:
            self._drop_split()

    async def _read_events(
        self, follower: LogFollower, path: str, give_up: asyncio.Timeout
    ) -> None:
        w = self.watch
        loop = asyncio.get_running_loop()
        backlog = 0  # the log's size when opened: its bytes are the past, read at once
        opened = False
        async with contextlib.aclosing(follower.events()) as events:
            async for ev in events:
                if isinstance(ev, LogData):
                    await self._feed(ev.data)
                    if not w.caught_up and ev.offset >= backlog:
                        w.caught_up = True  # after the feed: the backlog's end is the past
                elif isinstance(ev, LogTail):
                    w.preview(ev.data, ev.end)
                    await self._split_past(ev.end)
                elif isinstance(ev, LogOpened):
                    opened = True
                    give_up.reschedule(None)
                    if ev.new_run:
                        self._drop_split()
                        w.new_file(ev.reason)
                    if not w.caught_up:
                        backlog = ev.size
                        w.caught_up = ev.offset >= ev.size
                    w.link = "live"
                elif isinstance(ev, LogMissing):
                    w.link, w.note = "waiting", f"{path}: {ev.error}; waiting for it"
                    grace = self.missing_log_grace
                    if grace is not None and not opened and self.server is None:
                        give_up.reschedule(give_up.when() or loop.time() + grace)
                elif isinstance(ev, LogNote):
                    w.note = ev.message
                elif isinstance(ev, LogDetached):
                    w.note = (
                        f"{path} was {ev.why} while followed; still reading what the server "
                        f"writes to it"
                    )
                elif isinstance(ev, LinkDown):
                    w.link = f"stale: {ev.reason}"
                elif isinstance(ev, LinkUp):
                    w.link = "live"
                elif isinstance(ev, LogFailed):
                    w.link, w.note = "failed", ev.message

    async def _check_server(self, path: str) -> None:
        """Notice a server that dies without a word in its log (killed): its /proc entry
        is looked at every `check_every` seconds, one short command each time. Once the
        run is over, with keep_looking, discovery looks for a new server instead: one
        that writes another log ends this by raising _Started."""
        while True:
            await asyncio.sleep(self.check_every)
            server = self.server
            if self.restarting:
                continue
            if server is None or self.watch.state.state in _OVER:
                looking = self.keep_looking and not self.log and self.pid is None
                if looking and (new := await self._new_server(path)) is not None:
                    raise _Started(new)
                continue
            try:
                transport = await self.link.connected()
                r = await transport.run(f"exec cat /proc/{server.pid}/stat", timeout=10)
            except (TransportError, TimeoutError):
                continue  # the link's own handling says what is wrong
            if self.restarting or self.server is not server:
                continue  # restarted meanwhile: the answer is about the old process
            if not _same_process(r.stdout, server.start_time):
                if (successor := await self._successor(transport, server)) is not None:
                    self.server = successor  # restarted by another sgwatch or by hand
                    self.watch.note = f"restarted elsewhere: now pid {successor.pid}"
                    continue
                self.watch.server_gone(server.pid)

    async def _new_server(self, path: str) -> ServerProcess | None:
        """The newest server started since the followed run, if it writes another log
        than `path`; one that writes `path` is simply the followed server from now on
        (the follower reads its run already)."""
        old = self.server.pid if self.server is not None else None
        others = await self._others(None, old)
        new = max((s for s in others if readable(s)), key=lambda s: s.start_time, default=None)
        if new is None or output_of(new) != path:
            return new
        self.server = new
        self.watch.note = f"a new server writes {path}: pid {new.pid}"
        return None

    async def _successor(self, transport: Transport, gone: ServerProcess) -> ServerProcess | None:
        """A server that now writes the log the gone one wrote: a restart made elsewhere,
        whose new run the log follower is reading (not a crash of the old process)."""
        if gone.log is None:
            return None
        others = await self._others(transport, gone.pid)
        return next((s for s in others if s.log == gone.log), None)

    async def _others(self, transport: Transport | None, pid: int | None) -> list[ServerProcess]:
        """The servers discovery finds now (on `transport`, else the link's) besides `pid`;
        none when it fails: the link's own handling says what is wrong."""
        try:
            found = await self._discover(transport or await self.link.connected())
        except (TransportError, DiscoveryFailed, TimeoutError):
            return []
        return [s for s in found.servers if s.pid != pid]

    async def _follow_gpus(self) -> None:
        w = self.watch
        async with contextlib.aclosing(GpuStream(self.link).events()) as events:
            async for ev in events:
                if isinstance(ev, GpuData):
                    w.feed_gpu(ev.data)
                elif isinstance(ev, GpuUnavailable):
                    w.gpu_note = ev.message

    async def _no_gpus(self, why: str) -> None:
        self.watch.gpu_note = why


class _Started(Exception):
    """A new server started once the followed run was over (Session._check_server)."""

    def __init__(self, server: ServerProcess) -> None:
        super().__init__(server.pid)
        self.server = server


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


def described(servers: list[ServerProcess]) -> str:
    """One line per server: its pid and its command (secrets masked)."""
    return "\n".join(f"  pid {s.pid}: {masked(parse(s.argv)).shell}" for s in servers)


def _same_process(stat: bytes, start_time: int) -> bool:
    """Whether /proc/PID/stat still describes the process that started at `start_time`
    (not a zombie, not a recycled pid; 0: start time unknown, the pid alone decides)."""
    try:
        fields = stat.rsplit(b")", 1)[1].split()
        return fields[0] != b"Z" and (not start_time or int(fields[19]) == start_time)
    except (IndexError, ValueError):
        return False


async def _in_slices(feed: Callable[[bytes], None], data: bytes) -> None:
    """Feed `data` a slice at a time, the event loop run between (keys stay live)."""
    for start in range(0, len(data), HISTORY_SLICE):
        feed(data[start : start + HISTORY_SLICE])
        await asyncio.sleep(0)
