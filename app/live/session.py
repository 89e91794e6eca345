"""One watched host: connect, find the server, follow its log and the GPUs into a Watch.

The dashboard runs `Session.run` as a worker per host; the headless commands run
the same coroutine (follow.py). Nothing here draws: it only updates the Watch
(`link`, `note`, `source`, fed bytes), which the screen reads on its timer.
Which log to follow is choice.py's to say, how its backlog is read backlog.py's,
whether its server still runs liveness.py's. The controller tells the session
what it did (`restart_begun`, `restart_over`, `restarted`, `launched`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from sgwatch.config import HostProfile
from sgwatch.core.cmdline import parse
from sgwatch.engines import by_name, process_patterns
from sgwatch.live import linkstate
from sgwatch.live.backlog import Backlog
from sgwatch.live.choice import Ask, Choice, Unfollowed, output_of, source_label
from sgwatch.live.liveness import Started, check_server
from sgwatch.live.options import DEFAULTS, Options
from sgwatch.live.stopping import stopped
from sgwatch.live.streams import read_gpus, read_log
from sgwatch.live.watch import Watch
from sgwatch.remote.discover import Discovery, DiscoveryFailed, ServerProcess, discover
from sgwatch.remote.logfollow import LogFollower
from sgwatch.remote.streamfollow import printed, source_follower
from sgwatch.transport.base import Transport
from sgwatch.transport.errors import LinkLost, TransportError
from sgwatch.transport.link import Link


class Session:
    def __init__(
        self,
        watch: Watch,
        make_transport: Callable[[], Transport],
        log: str | None = None,
        profile: HostProfile | None = None,
        choose: Ask | None = None,
        pid: int | None = None,
        missing_log_grace: float | None = None,
        options: Options = DEFAULTS,
    ) -> None:
        self.watch = watch
        self._make = make_transport
        self.link = Link(make_transport)
        self.log = log  # --log overrides discovery
        self.profile = profile or HostProfile()
        self.options = options
        # A log named (--log, the profile) that is missing this long, never having been
        # opened, ends the session (None: wait for it as long as the session runs).
        self.missing_log_grace = missing_log_grace
        self._choice = Choice(
            watch, log, self.profile, choose, pid, options.since_now, options.log_places
        )
        self.unfollowed: Unfollowed | None = None  # why the session gave up on a host that answered
        self.server: ServerProcess | None = None
        self._restarting = False  # a restart stops the server on purpose: not a crash
        self.python = ""  # the host's Python that discovery ran with
        self._backlog = Backlog(watch, options.split_from)  # the followed log's
        self.launch_offered = asyncio.Event()  # set while the offer of a launch stands
        self._launch: asyncio.Future[int] | None = None

    def again(self, pid: int | None = None) -> Session:
        """A new session to the same host with the same settings, from scratch."""
        return Session(
            Watch(self.watch.label),
            self._make,
            self.log,
            self.profile,
            self._choice.ask,
            pid,
            self.missing_log_grace,
            self.options,
        )

    @property
    def past_split(self) -> str | None:
        """How the followed log's past, read in two parts, was joined (Backlog.joined)."""
        return self._backlog.joined

    @property
    def restarting(self) -> bool:
        """A restart is stopping the server on purpose (the controller says so)."""
        return self._restarting

    @property
    def looks_for_new_servers(self) -> bool:
        """Whether a server started once the followed run is over is followed next."""
        return self.options.keep_looking and not self.log and self._choice.pid is None

    def found(self, python: str, server: ServerProcess | None = None) -> None:
        """What a command's own discovery found before it acts (restart, launch): the
        host's Python, and the server the action is about."""
        self.python, self.server = python, server

    def restart_begun(self) -> None:
        """A restart is stopping the server on purpose: its end is not a crash."""
        self._restarting = True

    def restart_over(self) -> None:
        """The restart is over, done or not: the server's end is news again."""
        self._restarting = False

    def restarted(self, server: ServerProcess, kept: str | None) -> None:
        """A restart started `server` (the old log kept as `kept`): it is followed."""
        self._restarting = False
        self.server = server
        w = self.watch  # the log pane's title names the new pid
        w.source = source_label(w.label, server.log or "", server)
        w.note = f"restarted: pid {server.pid}" + (f"; old log kept as {kept}" if kept else "")

    def launched(self, pid: int, log: str, kept: str | None) -> None:
        """The launch command started as `pid`, writing `log` (Controller.launch): find
        it and follow it."""
        kept_as = f"; the old log kept as {kept}" if kept else ""
        self.watch.note = f"launched: pid {pid}, log {log}{kept_as}"
        if self._launch is not None and not self._launch.done():
            self._launch.set_result(pid)

    def now_followed(self, server: ServerProcess, why: str) -> None:
        """`server` runs the followed log's run from now on (a restart made elsewhere)."""
        self.server = server
        self.watch.note = why

    async def run(self) -> None:
        w, every = self.watch, self.options.check_every
        try:
            found = await self.discover(await self.first_connection())
            self.python = found.python
            offer = self.options.offer_launch and self.profile.launch
            if offer and not found.servers and not self.log:
                self._choice.pid = await self._wait_for_launch()
                found = await self.discover(await self.link.connected())
        except (TransportError, DiscoveryFailed) as e:
            w.link, w.note = linkstate.FAILED, str(e)
            await self.link.close()
            return
        path = await self._pick(found)
        again = self.options.since_now or self.options.keep_looking
        while path is None and again and self.unfollowed is None:
            w.link, w.note = linkstate.NO_SERVER, self._choice.looking(every)
            await asyncio.sleep(every)
            try:
                found = await self.discover(await self.link.connected())
            except DiscoveryFailed:
                continue
            except TransportError as e:
                w.link, w.note = linkstate.FAILED, str(e)
                await self.link.close()
                return
            path = await self._pick(found)
        if path is None:
            w.link = linkstate.FAILED  # before the note: the failure's event takes it as its reason
            if self.unfollowed is None:
                self.unfollowed = Unfollowed.NO_SERVER
                w.note = self._choice.nothing()
            await self.link.close()
            return
        w.source = source_label(w.label, path, self.server)
        if self.server is not None and self.server.engine_version:
            w.engine_version = self.server.engine_version
        gpus = asyncio.ensure_future(
            read_gpus(self.link, w)
            if found.gpus or not found.gpu_error
            else self._no_gpus(found.gpu_error)
        )
        try:
            while True:  # a new server once the followed run is over (keep_looking)
                new = await self._follow_run(path, found.python, gpus)
                path = self._adopt(new, path)
        finally:
            try:
                await stopped(gpus)
                with contextlib.suppress(asyncio.CancelledError):
                    await gpus
            finally:  # also when cancelled again meanwhile
                await self.link.close()

    async def _pick(self, found: Discovery) -> str | None:
        path, server = await self._choice.pick(found)
        if server is not None:
            self.server = server
        if self._choice.ambiguous:
            self.unfollowed = Unfollowed.AMBIGUOUS
        return path

    async def _follow_run(self, path: str, python: str, gpus: asyncio.Future) -> ServerProcess:
        """Follow `path`, checking its server, until a new server started once the run
        was over (keep_looking): that server. A failure of either, or of the GPU
        stream, ends the session as it is raised."""
        follow = asyncio.ensure_future(self._follow_log(path, python))
        check = asyncio.ensure_future(check_server(self, path))
        try:
            done, _ = await asyncio.wait({follow, check, gpus}, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            await stopped(follow, check)
        for task in done:
            if isinstance(error := task.exception(), Started):
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
            self.watch.link = linkstate.stale(e)
            return await self.link.connected()

    async def discover(self, transport: Transport) -> Discovery:
        """Discovery; a link that drops meanwhile (the host had answered) is reported
        stale, made again and discovery run again, as following does after a drop."""
        logs = [p for p in [self.profile.log, *self.options.past_logs] if p]
        recent = self._choice.gone_request()
        while True:
            try:
                return await discover(transport, process_patterns(), logs=logs, recent=recent)
            except LinkLost as e:
                self.watch.link = linkstate.stale(e)
                await self.link.lost(transport)
                transport = await self.link.connected()

    async def _wait_for_launch(self) -> int:
        """Offer the profile's launch command; the pid it started as (`launched`)."""
        w = self.watch
        w.link = linkstate.NO_SERVER
        w.note = (
            f"no server running on {w.label}; "
            f"hosts.{w.label}.launch can start one: {self.profile.launch}"
        )
        self._launch = asyncio.get_running_loop().create_future()
        self.launch_offered.set()
        try:
            return await self._launch
        finally:
            self.launch_offered.clear()

    async def _follow_log(self, path: str, python: str) -> None:
        w = self.watch
        source = self.server.source if self.server is not None and not self.log else None
        if source is not None and printed(source):
            follower = source_follower(self.link, source, python)
        else:
            pid = self.server.pid if self.server is not None else None
            follower = LogFollower(self.link, path, python, pid)
        grace = self.missing_log_grace if self.server is None else None
        try:
            came = await read_log(w, follower, path, self._backlog, grace)
        finally:
            self._backlog.close()
        if not came:
            self.unfollowed = Unfollowed.NO_SERVER
            w.link = linkstate.FAILED  # before the note, as in run()
            w.note = f"{w.label}: {path} still does not exist after {self.missing_log_grace:g} s"

    async def _no_gpus(self, why: str) -> None:
        self.watch.gpu_note = why
