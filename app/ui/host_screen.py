"""One host's dashboard over another screen (the fleet table): `escape` comes back.
Its keys are the dashboard's for one host: the log's, the layout, the flag panel, the
bench and the experiments table.

The host is followed only while its screen is open: the session runs as the
screen's worker, so closing the screen ends it and its SSH connection.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen

from sgwatch.config import Config
from sgwatch.control.bench_probe import BenchSettings, load_prompts, prompts_from_texts
from sgwatch.control.controller import Controller
from sgwatch.control.history import History
from sgwatch.control.node_group import group_of
from sgwatch.control.podcontrol import PodController
from sgwatch.core.podaddress import is_pod_address, parse_address
from sgwatch.fleet.row import FleetRow
from sgwatch.fleet.tail import on_port
from sgwatch.live.options import Options
from sgwatch.live.podsession import PodSession
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.transport.factory import transport_for
from sgwatch.ui.bench_screen import BenchScreen
from sgwatch.ui.experiments_screen import ExperimentsScreen
from sgwatch.ui.flagpanel import FlagPanel
from sgwatch.ui.hostpane import HostPane
from sgwatch.ui.pane_actions import PaneActions
from sgwatch.ui.widgets.footer import Footer

FRAME_S = 1 / 12  # as the dashboard: changes drawn in batches at most this often
POD_ONLY_SSH = "{} reaches a server over SSH: not on a pod"
IDLE_S = 0.5  # what time alone changes (the run clock, a chart waiting to redraw)


@dataclass
class OpenedHost:
    watch: Watch
    follow: Callable[[], Awaitable[None]]  # feeds the watch until cancelled
    ctl: Controller | PodController | None = None


HostOpener = Callable[[FleetRow], OpenedHost]  # called for rows with a host


def ssh_opener(config: Config, accept_new_host_key: bool = False) -> HostOpener:
    """Opens a row's host as `sgwatch HOST` does (its profile from the config, its
    history), on the server listening on the row's port when several run there."""

    def open_host(row: FleetRow) -> OpenedHost:
        host = row.host or row.instance
        watch, history = Watch(host), History(host)
        session = Session(
            watch,
            partial(transport_for, host, accept_new_host_key=accept_new_host_key),
            profile=config.host(host),
            choose=on_port(_port(row.instance)),
            options=Options(past_logs=tuple(history.logs()), keep_looking=True),
        )
        return OpenedHost(watch, session.run, Controller(session, history))

    return open_host


def row_opener(config: Config, accept_new_host_key: bool = False) -> HostOpener:
    """Opens a row's host over SSH (ssh_opener), or a pod row's address (`k8s://...`,
    a fleet of pods) as the dashboard follows a pod: on through restarts."""
    ssh = ssh_opener(config, accept_new_host_key)

    def open_row(row: FleetRow) -> OpenedHost:
        if row.host is None or not is_pod_address(row.host):
            return ssh(row)
        address = parse_address(row.host)
        session = PodSession(Watch(row.instance), address, options=Options(keep_looking=True))
        return OpenedHost(session.watch, session.run, PodController(session))

    return open_row


def _port(instance: str) -> int | None:
    """The port of a scrape instance (`10.0.0.5:8000`); None for an SSH alias."""
    _, _, port = instance.rpartition(":")
    return int(port) if port.isdigit() else None


class HostScreen(PaneActions, Screen[None]):
    BINDINGS = [
        Binding("escape", "back", "back to the fleet"),
        Binding("slash", "search", "search"),
        Binding("n", "next_hit(1)", "next", show=False),
        Binding("N", "next_hit(-1)", "previous", show=False),
        Binding("end", "follow", "follow", show=False),
        Binding("w", "level", "warnings"),
        Binding("r", "rank", "rank"),
        Binding("c", "crash", "crash line", show=False),
        Binding("l", "layout", "layout"),
        Binding("m", "maximize", "max log"),
        Binding("f", "flags", "flags"),
        Binding("b", "bench", "bench"),
        Binding("e", "experiments", "experiments"),
    ]

    def __init__(self, opened: OpenedHost, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.opened = opened
        self.pane = HostPane(opened.watch, opened.ctl, clock, self._wake)
        self._soon: asyncio.TimerHandle | None = None
        self._unlisten: Callable[[], None] = lambda: None

    def compose(self) -> ComposeResult:
        yield self.pane
        yield Footer()

    def on_mount(self) -> None:
        self.title = self.opened.watch.label
        self._unlisten = self.opened.watch.listen(self._wake)
        self.run_worker(self.opened.follow(), group="host", exit_on_error=False)
        self.set_interval(IDLE_S, self._frame)

    def _wake(self) -> None:
        if self._soon is None:
            self._soon = asyncio.get_running_loop().call_later(FRAME_S, self._frame)

    def _frame(self) -> None:
        self._soon = None
        if self.pane.is_mounted and self.pane.due():
            with self.app.batch_update():
                self.pane.refresh_from_watch()

    def on_unmount(self) -> None:
        self._unlisten()
        if self._soon is not None:
            self._soon.cancel()
        if self.opened.ctl is not None:
            self.opened.ctl.close()

    def action_back(self) -> None:
        self.dismiss()

    def action_flags(self) -> None:
        ctl = self.opened.ctl
        if ctl is None or ctl.session.server is None:
            self.notify("no discovered server here: the flag panel needs one", severity="warning")
            return
        if isinstance(ctl, PodController):  # the owner restarts, not a node group
            self.app.push_screen(FlagPanel(ctl, self.opened.watch))
            return
        self.app.push_screen(FlagPanel(ctl, self.opened.watch, group_of(ctl, [ctl])))

    def action_bench(self) -> None:
        ctl, s = self.opened.ctl, self.opened.watch.state
        if ctl is None or ctl.session.server is None:
            self.notify("no discovered server here: the bench needs one", severity="warning")
            return
        if isinstance(ctl, PodController):
            self.notify(POD_ONLY_SSH.format("the bench"), severity="warning")
            return
        if s.state not in ("ready", "serving"):
            self.notify("not ready: the bench runs once the server is ready", severity="warning")
            return
        texts = ctl.session.profile.bench_prompts
        prompts = prompts_from_texts(texts) if texts else load_prompts()
        self.app.push_screen(BenchScreen(ctl, BenchSettings(prompts)))

    def action_experiments(self) -> None:
        ctl = self.opened.ctl
        if ctl is None:
            self.notify("no restart history here", severity="warning")
            return
        if isinstance(ctl, PodController):
            self.notify(POD_ONLY_SSH.format("the experiments table"), severity="warning")
            return
        self.app.push_screen(ExperimentsScreen(ctl))
