"""The restart loop for one watched server: its command, the flag catalog, restarts, outcomes.

The flag panel and `sgwatch restart` drive it:

    ctl = Controller(session)
    sel = await ctl.catalog()                  # live from the host's parser, else bundled
    check = await ctl.preflight(new_cmd)       # refuse before touching the server
    launched = await ctl.restart(new_cmd)      # stop, keep the log, launch, record
    # it records each run's outcome (ready, crashed) from the Watch's transitions

It keeps in memory only what must not be written down: the environment the
server runs with (secrets included) to relaunch it after a crash, and the last
command that reached ready, unmasked, for rollback.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import shlex
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from sgwatch.control import catalog_cache
from sgwatch.control.experiments import bench_record, ready_facts
from sgwatch.control.history import History, flag_set, restore
from sgwatch.control.restart import (
    Launched,
    Preflight,
    RestartFailed,
    RestartRequest,
    by_source,
    preflight,
    restart,
    restart_in_pane,
    restart_service,
    service_restart,
    stop,
)
from sgwatch.core import events as ev
from sgwatch.core.cmdline import MASK, LaunchCommand, parse, parse_shell
from sgwatch.core.eta import Earlier, ReadyEta, nearest, ready_eta
from sgwatch.core.state import ServerState, seconds_between
from sgwatch.core.summary import warmup_seconds
from sgwatch.engines import Engine, Selection, by_name, default, for_command
from sgwatch.live.session import Session
from sgwatch.live.transition import CRASHED, NEW_RUN, READY, Transition
from sgwatch.live.watch import Watch
from sgwatch.remote import hostprogram
from sgwatch.remote.discover import ServerProcess
from sgwatch.transport.base import Transport
from sgwatch.transport.errors import TransportError

if TYPE_CHECKING:  # httpx loads with the first request, not with the command line
    from sgwatch.control.bench_probe import BenchResult
    from sgwatch.control.server_http import ServerApi

_GONE = (ev.CRASHED, ev.STOPPED)
_GOOD = (ev.READY, ev.SERVING)


class Controller:
    def __init__(self, session: Session, history: History | None = None) -> None:
        self.session = session
        self.history = history or History(session.watch.label)
        self.busy = False  # a restart is in flight: a second one is refused
        self._held = False  # stopped by phase "stop", waiting for phase "launch"
        self.last_good: LaunchCommand | None = None
        self._env: dict[str, str] | None = None  # as last launched, secrets included
        self._selection: Selection | None = None
        self._current: tuple[ServerProcess, LaunchCommand] | None = None
        self._run_id: str | None = None  # the history record of the run being watched
        self._run_state: ServerState | None = None  # that run's state object, once seen
        self._stale_state: ServerState | None = None  # the state before our restart
        self._recorded: set[str] = set()  # outcomes already written for _run_id
        # Forwards close only with their transport: one per remote port and connection.
        self._forwards: dict[int, tuple[Transport, int]] = {}
        self._bench: tuple[str, BenchResult] | None = None  # (run id, the latest bench)
        self._unsubscribe = session.watch.subscribe(self._on_transition)

    @property
    def current(self) -> LaunchCommand | None:
        """The running server's command (parsed once per server: read on every frame)."""
        server = self.session.server
        if server is None:
            return None
        if self._current is None or self._current[0] is not server:
            self._current = (server, parse(server.argv))
        return self._current[1]

    @property
    def reference_warmup_s(self) -> float | None:
        """How long the nearest command (the same one, else the fewest flags apart) of
        this model took to reach ready the last time it did (history)."""
        cmd = self.current
        if cmd is None:
            return None
        near = nearest(flag_set(cmd), self._earlier())
        return near[-1].warmup_s if near else None

    def ready_eta(self) -> ReadyEta | None:
        """The watched run's time left to ready, from earlier runs of its model on this
        host (None: it is not warming up, or there are none to go by)."""
        cmd, s = self.current, self.session.watch.state
        if cmd is None or s.state not in ev.WARMUP_PHASES:
            return None
        spent: dict[str, float] = {}
        for p in s.phases:
            took = p.seconds if p.ended_at is not None else seconds_between(p.started_at, s.now_ts)
            spent[p.name] = spent.get(p.name, 0.0) + (took or 0.0)
        return ready_eta(flag_set(cmd), self._earlier(), spent, s.state, s.compile_cache)

    def _earlier(self) -> list[Earlier]:
        """Earlier runs of the watched run's model, parallelism and engine release."""
        return self.history.earlier(run_identity(self.session.watch), self._run_id)

    @property
    def engine(self) -> Engine:
        """The server's engine, as discovery chose it from the command line on the host."""
        server = self.session.server
        return by_name(server.engine) if server is not None else default()

    async def catalog(self) -> Selection:
        """The flags the server accepts: asked of the host's own parser once, else bundled."""
        if self._selection is None:
            server, engine = self.session.server, self.engine
            output = None
            host = self.session.watch.label
            asked = False
            program = engine.catalog_program
            if server is not None and server.interpreter and program is not None:
                key = (host, server.interpreter, server.engine_version)
                output = catalog_cache.load(*key)
                if output is None:
                    sent = hostprogram.program(program)
                    output, asked = await self._ask_host(server.interpreter, sent), True
            cmd = self.current
            version = (server.engine_version if server else None) or (
                engine.command_version(cmd) if cmd else None
            )
            self._selection = engine.select_catalog(output, version)
            if asked and self._selection.source == "live":
                catalog_cache.save(*key, output)
        return self._selection

    async def _ask_host(self, interpreter: str, source: str) -> str:
        """What the host's own parser says (the engine's catalog program), or why it could not."""
        try:
            transport = await self.session.link.connected()
            r = await transport.run(
                f"exec {shlex.quote(interpreter)} -", input=source.encode(), timeout=180
            )
        except (TransportError, TimeoutError) as e:
            return json.dumps({"error": f"could not run it: {e}"})
        return r.stdout.decode("utf-8", "replace")

    async def preflight(self, new: LaunchCommand) -> Preflight:
        sel = await self.catalog()
        transport = await self.session.link.connected()
        server = self.session.server
        interpreter = server.interpreter if server else None
        check = await preflight(transport, self.engine, interpreter, new, sel.catalog)
        return named(check, self.current, new)

    @property
    def launch_command(self) -> LaunchCommand | None:
        """hosts.NAME.launch, while the session offers it (no server runs on the host)."""
        launch = self.session.profile.launch
        offered = self.session.launch_offered.is_set() and not self.busy
        return parse_shell(launch) if offered and launch else None

    async def launch_check(self, cmd: LaunchCommand) -> Preflight:
        """The preflight of a first launch: its own interpreter's parser judges it."""
        engine = for_command(cmd) or default()
        catalog = engine.select_catalog(None, engine.command_version(cmd)).catalog
        python = cmd.program[0] if cmd.program[0].rsplit("/", 1)[-1].startswith("python") else None
        transport = await self.session.link.connected()
        return await preflight(transport, engine, python, cmd, catalog)

    async def launch(self, cmd: LaunchCommand, cwd: str | None = None) -> Launched:
        """Start `cmd` detached where no server runs, record it, and have the session
        follow it. Its log: the profile's, else a new one in the host's state directory;
        it runs in `cwd`, else the home directory."""
        if self.busy:
            raise RestartFailed("busy", "a launch or restart is already in progress")
        self.busy = True
        try:
            req = RestartRequest(
                argv=cmd.server_argv,
                log=self.session.profile.log or "",
                pid=None,
                start_time=None,
                cwd=cwd,
                env=cmd.env,
                require_running=False,
                mode="launch",
                first=True,
            )
            transport = await self.session.link.connected()
            launched = await restart(transport, self.session.python or "python3", req)
        finally:
            self.busy = False
        self._env = launched.env
        self._run_id = self.history.launched(
            parse(cmd.server_argv), launched.cwd, launched.pid, launched.log
        )
        self._recorded = set()
        self.session.launched(launched.pid, launched.log, launched.kept)
        return launched

    def rollback_target(self) -> LaunchCommand:
        """The last command that reached ready (this session, else the history)."""
        current = self.current
        if self.last_good is not None and self.last_good != current:
            return self.last_good
        run = self.history.last_good()
        if run is None or current is None:
            raise RestartFailed("rollback", "no earlier command reached ready")
        try:
            cmd = restore(run.command, current)
        except ValueError as e:
            raise RestartFailed("rollback", str(e)) from None
        if cmd.argv == current.argv:
            raise RestartFailed("rollback", "the server already runs the last good command")
        return cmd

    async def restart(
        self,
        new: LaunchCommand,
        grace_s: float = 30.0,
        gpu_wait_s: float = 120.0,
        phase: str = "restart",
    ) -> Launched | None:
        """Stop the server, keep its log, launch `new` (RestartFailed says why not).

        A multi-node server's nodes all stop before any starts (node_group.py): phase "stop"
        stops and holds the server (returns None), phase "launch" then starts `new`."""
        launching = phase == "launch"
        if launching != self._held:
            why = "nothing was stopped to launch" if launching else "a restart is in progress"
            raise RestartFailed("busy", why)
        if self.busy:
            raise RestartFailed("busy", "a restart is already in progress")
        server = self.session.server
        if server is None:
            raise RestartFailed("target", "no discovered server to restart (--log skips discovery)")
        # the same flags: a container's or unit's own restart, where its owner may
        current = self.current
        same = current is not None and new.server_argv == current.server_argv
        service = same and service_restart(server.source) is not None
        if not service and (refused := by_source(server.source, new)):
            raise RestartFailed("target", refused)
        in_pane = server.source is not None and server.source.kind == "tmux"
        if (in_pane or service) and phase != "restart":
            raise RestartFailed("target", f"{server.source.label} restarts alone, not as a node")
        log = server.log or self.session.profile.log or ("" if in_pane or service else None)
        if log is None:
            raise RestartFailed(
                "target", "the server's output is not a file; set hosts.<name>.log to restart it"
            )
        state = self.session.watch.state
        env = self._env
        gone = launching or state.state in _GONE
        if env is None and gone and server.env is not None:
            if hidden := [k for k, v in server.env.items() if v == MASK]:
                raise RestartFailed(
                    "env",
                    f"the server is gone and its {', '.join(hidden)} cannot be restored; "
                    "start it by hand once, or restart it while it runs",
                )
            env = server.env
        self.busy = True
        self.session.restart_begun()
        try:
            if not launching:
                self._finish_run()
                # from here the old run is over: its state is not judged again
                before = self._run_state, self._run_id
                self._stale_state, self._run_state, self._run_id = state, None, None
            # run into `tee FILE` before: again, so the file goes on as it did
            source = server.source
            piped = source is not None and source.kind == "pipe" and source.path == log
            req = RestartRequest(
                argv=new.server_argv,
                log=log,
                pid=None if launching else server.pid,
                start_time=server.start_time,
                cwd=server.cwd,
                env={**env, **new.env} if env is not None else None,  # None: the host reads it
                require_running=not gone,
                grace_s=grace_s,
                gpu_wait_s=gpu_wait_s,
                mode=phase,
                tee=piped,
            )
            transport = await self.session.link.connected()
            python = self.session.python or "python3"
            try:
                if phase == "stop":
                    self._env = (await stop(transport, python, req)).env
                    self._held = True  # the server is down until phase "launch"
                    return None
                if in_pane:  # typed into the user's pane, as the user would
                    launched = await restart_in_pane(transport, python, server, new, grace_s)
                elif service:
                    launched = await restart_service(transport, python, server)
                else:
                    launched = await restart(transport, python, req)
            except RestartFailed:
                if not launching:
                    self._stale_state = None  # refused: the old run goes on being watched
                    self._run_state, self._run_id = before
                raise
        finally:
            self.busy = False
            if not self._held:  # a server held down stays down on purpose
                self.session.restart_over()
        self._held = False
        self._env = launched.env
        self._run_id = self.history.launched(new, launched.cwd, launched.pid, log)
        self._recorded = set()
        restarted = dataclasses.replace(
            server,
            pid=launched.pid,
            pgid=launched.pid,
            start_time=launched.start_time or 0,
            argv=new.server_argv,
            cwd=launched.cwd,
            log=log,
            log_deleted=False,
        )
        self.session.restarted(restarted, launched.kept)
        return launched

    def attach(self, watch: Watch) -> None:
        """Record the outcomes of the runs `watch` follows (a session of its own for
        the new run, after `sgwatch restart`), instead of the session's Watch."""
        self._unsubscribe()
        self._unsubscribe = watch.subscribe(self._on_transition)

    def _on_transition(self, t: Transition) -> None:
        """Record the watched run's outcome once it is known."""
        state = t.run
        if state is None or state is self._stale_state:
            return  # a link change, or the old run: the follower has not seen the new file
        if self._run_state is not state or t.kind == NEW_RUN:
            if self._run_state is not None and self._run_id is not None:
                self._finish_run()  # another run began (restarted elsewhere)
                self._run_id = None
            self._run_state, self._recorded = state, set()
        if t.kind == READY and state.state in _GOOD and "ready" not in self._recorded:
            self._recorded.add("ready")
            self.last_good = self.current
            if self._ensure_run() is not None:
                self.history.outcome(
                    self._run_id,
                    "ready",
                    warmup_seconds=warmup_seconds(state),
                    **ready_facts(state),
                    **run_identity(self.session.watch),
                )
        elif t.kind == CRASHED and "crashed" not in self._recorded and self._run_id:
            self._recorded.add("crashed")
            crash = state.crash.summary if state.crash else ""
            self.history.outcome(self._run_id, "crashed", note=crash)

    def _ensure_run(self) -> str | None:
        """The history id of the watched run, recorded now if it has none yet."""
        if self._run_id is None and self.current is not None:
            server = self.session.server
            self._run_id = self.history.launched(
                self.current,
                server.cwd if server else None,
                server.pid if server else None,
                server.log if server else None,
            )
        return self._run_id

    @contextlib.asynccontextmanager
    async def server_api(self) -> AsyncIterator[ServerApi]:
        """The watched server's HTTP API through a port forward (NotReady: none to reach)."""
        from sgwatch.control.server_http import NotReady, api_at
        from sgwatch.engines.port import server_port

        server = self.session.server
        if server is None:
            raise NotReady(f"{self.session.watch.label}: no discovered server to reach")
        port = server_port(server.argv)
        transport = await self.session.link.connected()
        known = self._forwards.get(port)
        if known is None or known[0] is not transport:
            known = self._forwards[port] = (transport, await transport.forward(port))
        async with api_at(known[1], f"{transport.label}:{port}") as api:
            yield api

    async def server_settings(self) -> dict:
        """What the running server says it runs with (`/server_info`), or {} if it cannot
        be asked: the log's server_args line says the same, when the log has it."""
        import httpx

        from sgwatch.control.server_http import NotReady

        try:
            async with asyncio.timeout(10), self.server_api() as api:
                return await api.server_info()
        except (NotReady, TransportError, TimeoutError, OSError, httpx.HTTPError, ValueError):
            return {}

    @property
    def bench(self) -> BenchResult | None:
        """The latest bench of the watched run, if one completed."""
        if self._bench is None or self._bench[0] != self._run_id:
            return None
        return self._bench[1]

    def record_bench(self, result: BenchResult) -> None:
        """Keep a completed bench with the watched run (and in its history record)."""
        if (run_id := self._ensure_run()) is not None:
            self._bench = (run_id, result)
            self.history.note(run_id, bench=bench_record(result))

    def _finish_run(self) -> None:
        """The run's final tok/s, once it is over (a restart, or the dashboard closing)."""
        state = self._run_state
        if self._run_id and state is not None and state.throughput.median is not None:
            self.history.outcome(
                self._run_id,
                "ready" if state.ready else state.state,
                tok_s=state.throughput.median,
                accept_len=state.throughput.accept_len_mean,
                warmup_seconds=warmup_seconds(state),
            )

    def close(self) -> None:
        self._unsubscribe()
        self._finish_run()


def run_identity(watch: Watch) -> dict[str, object]:
    """What makes runs comparable for timing (history.IDENTITY), as far as the log and
    discovery say: the model, the parallelism, the engine's release."""
    run = watch.state.identity
    found = {
        "model": run.model if run is not None else None,
        "parallel": run.parallel if run is not None else None,
        "engine_version": watch.engine_version or None,
    }
    return {k: v for k, v in found.items() if v is not None}


def named(check: Preflight, old: LaunchCommand | None, new: LaunchCommand) -> Preflight:
    """A refusal of the command as a whole names the flags the change touched where its
    message names none of them: the host's parser says what is missing ("requires at
    least one encoder urls to be set via --encoder-urls"), not what asked for it."""
    if old is None:
        return check
    before = {f.name: f.values for f in old.flags}
    after = {f.name: f.values for f in new.flags}
    changed = [n for n, v in after.items() if before.get(n) != v]
    changed += [n for n in before if n not in after]
    if not changed:
        return check
    problems = [
        dataclasses.replace(p, flag=", ".join(changed))
        if not p.flag and not any(n in p.message for n in changed)
        else p
        for p in check.problems
    ]
    return dataclasses.replace(check, problems=problems)
