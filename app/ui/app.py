"""The dashboard: a tab per watched host, redrawn from its Watch when it changes.

Streams run as tasks the caller supplies (`pumps`: coroutines that feed a
Watch); the UI never touches the network and never writes per line.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from functools import partial

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Input, TabbedContent, TabPane

from sgwatch.control.bench_probe import BenchSettings, load_prompts, prompts_from_texts
from sgwatch.control.controller import Controller
from sgwatch.control.node_group import group_of
from sgwatch.control.podcontrol import PodController
from sgwatch.control.restart import RestartFailed
from sgwatch.core.cmdline import LaunchCommand, masked
from sgwatch.core.display import badge, duration
from sgwatch.core.state import seconds_between
from sgwatch.live.transition import CRASHED, READY, Transition
from sgwatch.live.watch import Watch
from sgwatch.remote.discover import ServerProcess
from sgwatch.ui import gctune, heap, leftopen, memos
from sgwatch.ui.badges import PHASE_LABELS
from sgwatch.ui.bench_screen import BenchScreen
from sgwatch.ui.experiments_screen import ExperimentsScreen
from sgwatch.ui.flagpanel import FlagPanel
from sgwatch.ui.fleet_table import FleetView
from sgwatch.ui.help import HelpScreen
from sgwatch.ui.hostpane import HostPane
from sgwatch.ui.modals import ConfirmRestart
from sgwatch.ui.overview import Overview
from sgwatch.ui.pane_actions import PaneActions
from sgwatch.ui.picker import ServerPicker
from sgwatch.ui.probe_advice import ProbeAdviceScreen
from sgwatch.ui.quiet import hidden
from sgwatch.ui.themes import DEFAULT_THEME, bundled_themes, register_themes
from sgwatch.ui.widgets.footer import Footer
from sgwatch.ui.widgets.gpus import GpuPanel

FRAME_S = 1 / 12  # frames at most this often: a flood's lines are drawn in batches
# With nothing arriving, a frame this often for what time alone changes: the run
# clock's next second, a chart waiting for its next redraw, a finished bench.
IDLE_S = 0.5
# A frame waits this long after the change that asked for it: what arrives together
# (a burst of SSH packets, a crash line and the exception line naming its cause)
# is drawn, and announced, together.
GATHER_S = FRAME_S / 2
Pump = Callable[[Watch], Awaitable[None]]
POD_ONLY_SSH = "{} reaches a server over SSH: not on a pod"

# Each binding's id is the action name `[keys]` in the config moves it by (config.KEY_ACTIONS).
KEYS = [
    # Priority: the app runs it as the key arrives, so the keys typed right after it
    # reach the search (focused at once), not the log view that had the focus.
    Binding("slash", "search", "search", id="search", priority=True),
    Binding("n", "next_hit(1)", "next", show=False, id="next"),
    Binding("N", "next_hit(-1)", "previous", show=False, id="previous"),
    Binding("end", "follow", "follow", show=False, id="follow"),  # the log's status line says it
    Binding("w", "level", "warnings", id="level"),
    Binding("r", "rank", "rank", id="rank"),
    Binding("c", "crash", "crash line", show=False, id="crash"),
    Binding("l", "layout", "layout", id="layout"),
    Binding("m", "maximize", "max log", id="maximize"),
    Binding("g", "gpus", "max GPUs", show=False, id="gpus"),
    Binding("f", "flags", "flags", id="flags"),
    Binding("b", "bench", "bench", id="bench"),
    Binding("e", "experiments", "experiments", id="experiments"),
    Binding("L", "launch", "launch server", id="launch"),  # only while one can be launched
    Binding("p", "probe_advice", "probe advice", id="probe_advice"),  # on a pod's tab only
    *(Binding(str(n), f"tab({n})", f"host {n}", show=False) for n in range(10)),
    Binding("question_mark", "help", "help", id="help"),
    Binding("q", "quit", "quit", id="quit"),
]
_DESCRIPTIONS = {
    "search": "search the log",
    "follow": "follow the log again after scrolling up",
    "level": "show all lines, warnings and errors, or errors only",
    "rank": "show one rank's lines (TP0, TP1, ...) or all",
    "crash": "jump to the crash line in the log",
    "layout": "panels beside the log, or above it",
    "maximize": "maximise the log pane (esc restores)",
    "gpus": "maximise the GPU panel, with history charts (esc restores)",
    "flags": "the flag panel: edit the launch command, restart, roll back, history",
    "bench": "bench probe: tok/s, TTFT and inter-token latency at concurrency 1 and 4",
    "experiments": "experiments table: every run of this host, flag diffs, warmup, tok/s",
    "launch": "start the server hosts.NAME.launch names (when none runs on the host)",
    "probe_advice": "a pod's startupProbe, sized from its workload's recorded warmups",
    "help": "this help",
    "quit": "quit sgwatch (the server keeps running)",
}
# The keys that act on the chosen host: none on the overview or under a dialog.
_HOST_ACTIONS = (_DESCRIPTIONS.keys() - {"help", "quit"}) | {"next_hit"}


class SgwatchApp(PaneActions, App[None]):
    CSS_PATH = "sgwatch.tcss"
    TITLE = "sgwatch"
    BINDINGS = KEYS
    MEMO_CLEAR_S: float | None = memos.CLEAR_EVERY_S  # None: never (the soak's baseline)
    HEAP_TRIM_S = heap.TRIM_EVERY_S

    def __init__(
        self,
        watches: list[Watch],
        pumps: Iterable[Pump] = (),
        theme: str | None = None,
        bell: bool = True,
        toast: bool = True,
        controllers: Iterable[Controller | PodController | None] = (),
        clock: Callable[[], float] = time.monotonic,  # the throttles' clock (tests: their own)
        keys: Mapping[str, str] | None = None,
        alerts: Mapping[str, tuple[bool, bool]] | None = None,
    ) -> None:
        super().__init__()
        leftopen.prepare()  # left open for days: what ui/leftopen.py sets once
        self._keys = dict(keys or {})  # the config's [keys]: binding id -> key(s)
        self.set_keymap(self._keys)
        register_themes(self)
        self.theme = theme or DEFAULT_THEME
        self.watches = watches
        self._pumps = list(pumps)
        self._bell = bell
        self._toast = toast
        self._alerts = dict(alerts or {})  # host label -> (bell, toast), over the defaults
        self._news: list[tuple[Watch, str]] = []  # ready / crashed, announced next frame
        self._unsubscribe: list[Callable[[], None]] = []
        self._controllers = list(controllers)
        self._clock = clock
        self._ticker: asyncio.TimerHandle | None = None  # the next frame
        self._frame_soon = False  # the next frame comes for news, not the idle tick
        self._frame_at = 0.0  # the event loop's time of the last frame
        self._tabs: TabbedContent | None = None  # found at mount
        self._pane_of: dict[str, HostPane] = {}  # tab id -> its host's pane

    def compose(self) -> ComposeResult:
        with TabbedContent():
            if len(self.watches) > 1:
                with TabPane("overview", id="overview"):
                    yield Overview(self.watches, self._clock)
            for i, watch in enumerate(self.watches):
                ctl = self._controllers[i] if i < len(self._controllers) else None
                with TabPane(watch.label, id=f"host-{i}"):
                    yield HostPane(watch, ctl, self._clock, self._wake)
        yield Footer()

    def on_mount(self) -> None:
        for watch in self.watches:
            self._unsubscribe.append(watch.subscribe(partial(self._on_transition, watch)))
            self._unsubscribe.append(watch.listen(self._wake))
        for watch, pump in zip(self.watches, self._pumps, strict=False):
            self.run_worker(pump(watch), group="streams", exit_on_error=False)
        for ctl in self._controllers:
            if isinstance(ctl, Controller):
                self.run_worker(self._launch_key_when_offered(ctl), exit_on_error=False)
        # What the frame timer and the keys use, found once: a query walks the DOM, and
        # Textual caches each one under the DOM's version, so one at every key or footer
        # refresh filled the screen's cache (1,024 entries) with stale ones.
        self._overviews, self._panes = list(self.query(Overview)), list(self.query(HostPane))
        self._tabs = self.query_one(TabbedContent)
        self._pane_of = {f"host-{i}": pane for i, pane in enumerate(self._panes)}
        # A hidden tab draws nothing (ui/quiet.py): the one chosen draws before it shows.
        self.watch(self._tabs, "active", self._draw_shown, init=False)
        gctune.settle()  # the dashboard is built: keep GC passes short from here on
        if self.MEMO_CLEAR_S is not None:
            self.set_interval(self.MEMO_CLEAR_S, memos.clear)
        self.set_interval(self.HEAP_TRIM_S, heap.trim)
        self._tick()

    def _wake(self) -> None:
        """Something changed: a frame GATHER_S from now, and FRAME_S after the last.
        Frames come from changes, not a poll: a 12 Hz poll cost ~0.3 % of a core idle."""
        if self._frame_soon or self._ticker is None:  # before mount: the first frame is due
            return
        self._frame_soon = True
        self._ticker.cancel()
        loop = asyncio.get_running_loop()
        when = max(loop.time() + GATHER_S, self._frame_at + FRAME_S)
        self._ticker = loop.call_at(when, self._tick)

    def _tick(self) -> None:
        # A bare event-loop timer: Textual's interval timer cost ~0.25 ms a tick.
        loop = asyncio.get_running_loop()
        self._frame_soon, self._frame_at = False, loop.time()
        self._ticker = loop.call_later(IDLE_S, self._tick)
        try:
            self._frame()
        except Exception as error:  # as Textual does for its timers: show it and exit
            self._handle_exception(error)

    def _on_transition(self, watch: Watch, t: Transition) -> None:
        if t.kind in (READY, CRASHED) and not t.past:  # not for a server already up
            self._news.append((watch, t.kind))
        self._wake()  # a link or a note changes what the screen shows

    def _frame(self) -> None:
        # Announced a frame later than decided: a crash's exception line, which
        # names its cause, usually follows the line that decided it.
        news, self._news = self._news, []
        for watch, kind in news:
            self._announce(watch, kind)
        # An idle tick has nothing new most times: decide that before any Textual
        # work (a batch update alone costs ~0.5 ms).
        self._draw(due_only=True)

    def _draw_shown(self) -> None:
        # A panel maximised in the tab left would stay on the screen, and not be drawn.
        self.screen.minimize()
        self._draw(due_only=False)

    def _draw(self, due_only: bool) -> None:
        due = [pane for pane in self._panes if pane.due()]
        overviews = [o for o in self._overviews if o.due() or (not due_only and not hidden(o))]
        if not due and not overviews:
            return
        with self.batch_update():
            for overview in overviews:
                overview.show_watches()
            for pane in due:
                pane.refresh_from_watch()

    def _announce(self, watch: Watch, kind: str) -> None:
        """One bell and one toast per transition, as the host's settings say."""
        bell, toast = self._alerts.get(watch.label, (self._bell, self._toast))
        if bell:
            self.bell()
        if not toast:
            return
        s, label = watch.state, watch.label
        if kind == READY:
            took = duration(seconds_between(s.phases[0].started_at, s.ready_at)) if s.phases else ""
            self.notify(f"{label}: ready" + (f" after {took}" if took else ""), title="sgwatch")
        else:
            phase = PHASE_LABELS.get(s.crash.phase, s.crash.phase) if s.crash else "?"
            summary = s.crash.summary if s.crash else ""
            self.notify(f"{label}: crashed during {phase}: {summary}", severity="error", timeout=15)

    # -- actions (on the host in the visible tab) -----------------------------

    @property
    def _chosen(self) -> str:
        """The id of the tab shown ("overview" until the dashboard is mounted)."""
        return "overview" if self._tabs is None else self._tabs.active

    @property
    def pane(self) -> HostPane:
        """The host pane in the tab shown (NoMatches on the overview)."""
        try:
            return self._pane_of[self._chosen]
        except KeyError:
            raise NoMatches(f"no host pane in the {self._chosen!r} tab") from None

    def action_gpus(self) -> None:
        self.screen.maximize(self.pane.query_one(GpuPanel), container=False)

    def action_flags(self) -> None:
        ctl = self.pane.ctl
        if ctl is None or ctl.session.server is None:
            self.notify(
                "no discovered server here: the flag panel needs one (--log skips discovery)",
                severity="warning",
            )
            return
        if isinstance(ctl, PodController):  # the owner restarts, not a node group
            self.push_screen(FlagPanel(ctl, self.pane.watch))
            return
        self.push_screen(FlagPanel(ctl, self.pane.watch, group_of(ctl, self._controllers)))

    def action_bench(self) -> None:
        pane = self.pane
        ctl, s = pane.ctl, pane.watch.state
        if ctl is None or ctl.session.server is None:
            self.notify("no discovered server here: the bench needs one", severity="warning")
            return
        if isinstance(ctl, PodController):
            self.notify(POD_ONLY_SSH.format("the bench"), severity="warning")
            return
        if s.state not in ("ready", "serving"):
            self.notify(
                f"{pane.watch.label}: not ready ({badge(s.state).word}): "
                "the bench runs once the server is ready",
                severity="warning",
            )
            return
        texts = ctl.session.profile.bench_prompts
        prompts = prompts_from_texts(texts) if texts else load_prompts()
        self.push_screen(BenchScreen(ctl, BenchSettings(prompts)))

    async def _launch_key_when_offered(self, ctl: Controller) -> None:
        await ctl.session.launch_offered.wait()
        self.refresh_bindings()  # the footer shows the launch key from now on

    def _launch_command(self) -> LaunchCommand | None:
        ctl = self.pane.ctl
        return ctl.launch_command if isinstance(ctl, Controller) else None

    def action_launch(self) -> None:
        if self._launch_command() is None:  # from the command palette
            self.notify(
                "nothing to launch: a server runs here, or hosts.NAME.launch is not set",
                severity="warning",
            )
            return
        self._launch(self.pane.ctl)

    @work(group="launch", exclusive=True)
    async def _launch(self, ctl: Controller) -> None:
        """Preflight, confirm with the exact command, start it; the session then follows it."""
        cmd, label = ctl.launch_command, ctl.session.watch.label
        if cmd is None:
            return
        self.notify(f"{label}: checking the launch command with the host's parser…")
        check = await ctl.launch_check(cmd)
        if not check.ok:
            why = "; ".join(f"{p.flag} {p.message}".strip() for p in check.errors)
            self.notify(f"{label}: not launched: {why}", severity="error", timeout=15)
            return
        log = ctl.session.profile.log or "a new log in the host's ~/.local/state/sgwatch/logs/"
        confirm = ConfirmRestart(
            f"launch a server on {label}",
            [f"no server runs on {label}: start hosts.{label}.launch"],
            masked(cmd).shell,
            check,
            f"It starts detached in the home directory with the login's environment, "
            f"its output going to {log}.",
            verb="launch",
        )
        if not await self.push_screen(confirm, wait_for_dismiss=True):
            return
        try:
            launched = await ctl.launch(cmd)
        except RestartFailed as e:
            self.notify(f"{label}: launch failed ({e.stage}): {e.message}", severity="error")
            return
        finally:
            self.refresh_bindings()
        self.notify(f"{label}: launched, pid {launched.pid}; log {launched.log}", title="sgwatch")

    def action_experiments(self) -> None:
        ctl = self.pane.ctl
        if ctl is None:
            self.notify("no restart history for a replayed log", severity="warning")
            return
        if isinstance(ctl, PodController):
            self.notify(POD_ONLY_SSH.format("the experiments table"), severity="warning")
            return
        self.push_screen(ExperimentsScreen(ctl))

    def action_probe_advice(self) -> None:
        ctl = self.pane.ctl
        if not isinstance(ctl, PodController):
            self.notify("probe advice is for a pod (k8s://...)", severity="warning")
            return
        self.push_screen(ProbeAdviceScreen(self.pane.watch.label, ctl))

    def on_unmount(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        if self._ticker is not None:
            self._ticker.cancel()
        gctune.release()  # what the app froze may be garbage now (tests run many apps)
        for ctl in self._controllers:
            if ctl is not None:
                ctl.close()  # the final tok/s of the run goes into the history

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The dashboard's keys act on the dashboard only, not under a panel or dialog."""
        if self._exit:  # quitting: keys typed after `q` open nothing (a screen raised as it went)
            return False
        if action == "search" and isinstance(self.focused, Input):
            return False  # a `/` typed into a text field (the search's own) is text
        if action in _HOST_ACTIONS:
            if len(self.screen_stack) > 1:
                return False
            if self._chosen == "overview":
                return False
            if action == "probe_advice":
                return isinstance(self.pane.ctl, PodController)
            return action != "launch" or self._launch_command() is not None
        return True

    def action_tab(self, number: int) -> None:
        """0: the overview; N: the N-th host."""
        tab = "overview" if number == 0 else f"host-{number - 1}"
        if self._tabs is None or number > len(self.watches):
            return
        if number or len(self.watches) > 1:
            self._tabs.active = tab

    def on_fleet_view_open(self, event: FleetView.Open) -> None:
        self.action_tab(int(event.row.key) + 1)  # the overview's rows are keyed by position

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.refresh_bindings()  # the host keys apply to host tabs only
        if event.pane.id == "overview":
            event.pane.query_one(Overview).table.focus()  # arrows and enter pick a host

    async def pick_server(self, host: str, servers: list[ServerProcess]) -> ServerProcess | None:
        """Ask which server to watch (from a session's worker); None: the newest."""
        return await self.push_screen(ServerPicker(host, servers), wait_for_dismiss=True)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self._key_help()))

    def _key_help(self) -> list[tuple[str, str]]:
        """Each action's key as bound now: the config's [keys] move them."""
        rows = []
        for b in KEYS:
            action = b.action.split("(")[0]
            if action in _DESCRIPTIONS:
                rows.append((self._shown(b), _DESCRIPTIONS[action]))
        hits = " / ".join(self._shown(b) for b in KEYS if b.id in ("next", "previous"))
        rows.insert(1, (hits, "next / previous match"))
        rows.append(("1-9 / 0", "jump to host N / the overview (several hosts)"))
        rows.append(("ctrl+p", "command palette (themes too)"))
        return rows

    def _shown(self, binding: Binding) -> str:
        keys = self._keys.get(binding.id or "", binding.key).split(",")
        return " / ".join(self.get_key_display(binding.with_key(k.strip())) for k in keys)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        # One command a bundled theme: "light" finds the light one by its name.
        for name in bundled_themes():
            switch = partial(setattr, self, "theme", name)
            yield SystemCommand(f"Theme: {name}", f"Switch to the {name} theme", switch)
        for b in KEYS:
            action = b.action.split("(")[0]
            if action in _DESCRIPTIONS and action != "quit":
                yield SystemCommand(
                    b.description.capitalize(),
                    _DESCRIPTIONS[action],
                    lambda b=b: self.run_action(b.action),
                )
