"""`sgwatch mcp`: sgwatch's watch, wait and actions as MCP tools over stdio.

Each tool answers compact JSON within a byte budget (budget.py); a refusal or a failure
is a tool error of one line, never a crash of the server. Read-only unless started with
`allow_actions`: restart and launch then still preview (the exact command, what would
happen) but act only when also called with confirm: true.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from sgwatch import __version__
from sgwatch.agent import actions, reads
from sgwatch.agent.benching import bench as run_bench
from sgwatch.agent.budget import LOG_BYTES, answer, clean
from sgwatch.agent.fleet import summary as fleet_summary
from sgwatch.agent.look import Reader, looking
from sgwatch.agent.status import status as status_of
from sgwatch.agent.waiting import wait_with_progress
from sgwatch.config import Config
from sgwatch.control.bench_probe import BenchResult
from sgwatch.control.headless import first_connection, headless_session, log_places
from sgwatch.engines import process_patterns
from sgwatch.fleet.open import Refused, look_once, open_source
from sgwatch.live.records import KINDS
from sgwatch.live.session import Session
from sgwatch.live.stopping import stopped
from sgwatch.remote.discover import DiscoveryFailed, discover
from sgwatch.transport.errors import TransportError

# How following ended -> (the exit status `sgwatch wait` would give, its meaning).
Judge = Callable[[str, Session], tuple[int, str]]
MAX_WAIT_S = 3600.0
MAX_EVENTS_S = 30.0
INSTRUCTIONS = (
    "Watch SGLang and vLLM servers on hosts reached over SSH (ssh aliases, or localhost). "
    "status says where a server is (phase, capture N/M, ETA, ready or the crash's cause); "
    "wait blocks until ready or crashed, with progress notifications; restart edits flags "
    "(preview first, then confirm: true); bench measures tok/s against the bandwidth ceiling."
)


class Agent:
    """The tools over one config; benches kept per (host, pid) for later status answers."""

    def __init__(self, config: Config, allow_actions: bool, judge: Judge) -> None:
        self.config, self.allowed, self.judge = config, allow_actions, judge
        self.benches: dict[tuple[str, int | None], BenchResult] = {}
        self.background: set[asyncio.Task] = set()  # restarted runs followed to their outcome

    def session(
        self,
        host: str,
        pid: int | None = None,
        log: str | None = None,
        timeout: float | None = None,
    ) -> Session:
        """A session on `host` (the server `pid`, or the one writing `log`)."""
        if not host or host.startswith("-") or any(c.isspace() for c in host):
            raise ToolError(f"refused: {host!r} is not an ssh alias, user@host[:port] or localhost")
        return headless_session(host, self.config, pid=pid, log=log, timeout=timeout)

    def server(self) -> MCPServer:
        mcp = MCPServer(
            "sgwatch",
            version=__version__,
            instructions=INSTRUCTIONS,
            log_level="WARNING",
            lifespan=self._lifespan,
        )
        for tool in (
            self.servers,
            self.status,
            self.wait,
            self.events,
            self.log,
            self.flags,
            self.restart,
            self.launch,
            self.bench,
            self.experiments,
            self.fleet,
        ):
            mcp.add_tool(tool, structured_output=False)
        return mcp

    @contextlib.asynccontextmanager
    async def _lifespan(self, _server: MCPServer) -> AsyncIterator[None]:
        """On the way out, stop following restarted runs (and close their links)."""
        try:
            yield None
        finally:
            await stopped(*self.background)

    async def servers(self, host: str) -> str:
        """The servers running on the host: pid, engine, model, port, where output goes."""
        session = self.session(host)
        try:
            transport = await first_connection(session)
            found = await discover(transport, process_patterns())
        except (TransportError, DiscoveryFailed) as e:
            raise ToolError(clean(str(e), 300)) from None
        finally:
            await session.link.close()
        return answer(reads.servers(host, found))

    async def status(self, host: str, pid: int | None = None, log: str | None = None) -> str:
        """Phase, capture N/M, ETA to ready, ready or crashed (cause, phase, remedy), what
        the server turned off and why, tok/s with the roofline sentence."""
        session = self.session(host, pid, log)
        async with looking(session):
            ctl = Reader(session)
            doc = status_of(session, ctl.ready_eta(), self._bench_of(session))
        return answer(doc)

    async def wait(
        self,
        host: str,
        ctx: Context,
        until: Literal["ready", "serving"] = "ready",
        timeout: float = 600.0,
        pid: int | None = None,
        log: str | None = None,
        every: int = 10,
    ) -> str:
        """Block until the server is ready (or serving), crashed or `timeout` s pass.
        Progress notifications at each phase and every `every` capture steps; returns the
        final status, the outcome and what `sgwatch wait`'s exit status would mean. `log`:
        follow that file (waited for while `timeout` allows) instead of discovering."""
        limit = min(max(timeout, 1.0), MAX_WAIT_S)
        session = self.session(host, pid, log, timeout=limit)
        told = 0

        async def notify(text: str) -> None:
            nonlocal told
            told += 1
            await ctx.report_progress(told, None, text)

        outcome = await wait_with_progress(session, until, limit, every, notify)
        code, meaning = self.judge(outcome, session)
        doc = {"outcome": outcome, "exit": code, "meaning": meaning}
        return answer(doc | status_of(session, None, self._bench_of(session)))

    async def events(
        self,
        host: str,
        since: str | None = None,
        only: list[str] | None = None,
        seconds: float = 3.0,
        pid: int | None = None,
        log: str | None = None,
    ) -> str:
        """The server's events (as `sgwatch events --json`) over `seconds` of following:
        the run so far as a snapshot, then what happens; `since`: an ISO time, `only`:
        the kinds to keep, as `sgwatch events --only` names them (phase, ready, crash...)."""
        if unknown := sorted(set(only or ()) - set(KINDS)):
            raise ToolError(f"unknown kind {', '.join(unknown)} (kinds: {', '.join(KINDS)})")
        session = self.session(host, pid, log)
        window = min(max(seconds, 0.5), MAX_EVENTS_S)
        return answer(await reads.events(session, window, since, set(only or ())))

    async def log(
        self,
        host: str,
        lines: int = 20,
        grep: str | None = None,
        pid: int | None = None,
        log: str | None = None,
    ) -> str:
        """The log's last `lines` lines (at most 50; those holding `grep`, any case),
        terminal escapes removed, secrets masked, each line cut at 200 characters."""
        session = self.session(host, pid, log)
        async with looking(session):
            doc = reads.log(session, lines, grep)
        return answer(doc, LOG_BYTES)

    async def flags(self, host: str, pid: int | None = None) -> str:
        """The server's flags by tuning group, what it changed against its command and
        why, and what it turned off that costs speed (with the flag that keeps it on)."""
        session = self.session(host, pid)
        async with looking(session):
            ctl = Reader(session)
            doc = await reads.flags(ctl)
        return answer(doc)

    async def restart(
        self,
        host: str,
        edits: actions.Edits,
        confirm: bool = False,
        pid: int | None = None,
        grace_s: float = 30.0,
    ) -> str:
        """Edit the server's flags and restart it. The edited command is judged by the
        engine's own parser on the host first. Without confirm: true, answers the exact
        command and what would happen, and changes nothing."""
        session = self.session(host)
        doc = await actions.restart(
            session, self.background, edits, pid, confirm, self.allowed, grace_s
        )
        return answer(doc)

    async def launch(
        self,
        host: str,
        command: str,
        log: str | None = None,
        tmux: str | None = None,
        cwd: str | None = None,
        confirm: bool = False,
    ) -> str:
        """Start a server's command on the host, detached, its output to `log` (or a new
        log), or typed into a new window of tmux session `tmux`. Only one SGLang or vLLM
        command, which the engine's own parser on the host must accept. Without confirm:
        true, answers what would happen and starts nothing."""
        if log and tmux:
            raise ToolError("refused: give log or tmux, not both")
        session = self.session(host)
        if log:
            session.profile = session.profile.model_copy(update={"log": log})
        return answer(await actions.launch(session, command, tmux, cwd, confirm, self.allowed))

    async def bench(
        self, host: str, concurrency: int = 1, max_tokens: int = 64, pid: int | None = None
    ) -> str:
        """Measure decode tok/s one request at a time, then `concurrency` at once, and the
        share of the GPUs' bandwidth ceiling the one-request rate reaches."""
        session = self.session(host, pid)
        doc, result = await run_bench(session, concurrency, max_tokens)
        self.benches[(host, doc.get("pid"))] = result
        return answer(doc)

    async def experiments(self, host: str) -> str:
        """The host's runs from sgwatch's history: flag changes from the first run,
        warmup seconds, tok/s from the log and the bench, the best run."""
        self.session(host)  # the same check of the name
        return answer(reads.experiments(host))

    async def fleet(self, name: str) -> str:
        """Every server of a fleet (a [fleets.NAME] of the config, or @GROUP of SSH hosts):
        counts by state, then the servers, problems first, each with engine, model, state,
        a short detail (phase, cause) and gen_tok_s. Read-only."""
        if not name:
            raise ToolError("name a fleet ([fleets.NAME] in the config) or @GROUP")
        try:
            source, _ = open_source(self.config, name, log_places(os.environ))
        except Refused as e:
            raise ToolError(clean(str(e), 300)) from None
        return answer(fleet_summary(name, await look_once(source)))

    def _bench_of(self, session: Session) -> BenchResult | None:
        pid = session.server.pid if session.server is not None else None
        return self.benches.get((session.watch.label, pid))


def serve(config: Config, allow_actions: bool, judge: Judge) -> None:
    """Run the MCP server on stdin and stdout until the client closes them."""
    Agent(config, allow_actions, judge).server().run("stdio")
