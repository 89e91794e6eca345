"""`sgwatch fleet`: the fleet table over a FleetSource, refreshed on a timer.

One refresh at a time: the next starts `interval_s` after the last one ended, so a
slow source stretches the period instead of piling refreshes up. `enter` on a row
with an SSH host (or a pod's address) opens its dashboard (host_screen.py); `escape`
comes back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping

from textual.app import App, ComposeResult
from textual.binding import Binding

from sgwatch.config import Config
from sgwatch.fleet.source import FleetSnapshot, FleetSource
from sgwatch.ui import gctune, heap, leftopen, memos
from sgwatch.ui.fleet_table import FleetView
from sgwatch.ui.host_screen import HostOpener, HostScreen, row_opener
from sgwatch.ui.themes import DEFAULT_THEME, register_themes
from sgwatch.ui.widgets.footer import Footer

INTERVAL_S = 5.0


class FleetApp(App[None]):
    CSS_PATH = "sgwatch.tcss"
    BINDINGS = [Binding("q", "quit", "quit", id="quit")]

    def __init__(
        self,
        source: FleetSource,
        open_host: HostOpener | None = None,  # None: rows open nothing
        interval_s: float = INTERVAL_S,
        clock: Callable[[], float] = time.time,  # the clock of the rows' changed_at
        theme: str | None = None,
        keys: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        leftopen.prepare()  # left open for days: what ui/leftopen.py sets once
        self.set_keymap(dict(keys or {}))
        register_themes(self)
        self.theme = theme or DEFAULT_THEME
        self.title = f"sgwatch fleet {source.name}"
        self.source = source
        self.open_host = open_host
        self.interval_s = interval_s
        self.view = FleetView(source.name, clock, sort="state")
        self.refreshes = 0  # snapshots shown (tests wait on it)

    def compose(self) -> ComposeResult:
        yield self.view
        yield Footer()

    def on_mount(self) -> None:
        self.view.table.focus()
        self.run_worker(self._refresh_loop(), group="fleet", exit_on_error=False)
        gctune.settle()
        self.set_interval(memos.CLEAR_EVERY_S, memos.clear)  # left open for days too
        self.set_interval(heap.TRIM_EVERY_S, heap.trim)

    async def _refresh_loop(self) -> None:
        last: FleetSnapshot | None = None
        while True:
            try:
                snap = await self.source.snapshot()
            except Exception as e:  # the protocol says stale, never raise: show it so
                rows = last.rows if last else ()
                why = f"the source failed: {e}"
                snap = FleetSnapshot(rows, time.time(), stale=True, problem=why)
            last = snap
            self.view.show(snap)
            self.refreshes += 1
            await asyncio.sleep(self.interval_s)

    def on_fleet_view_open(self, event: FleetView.Open) -> None:
        row = event.row
        if row.host is None:
            self.notify(
                f"{row.instance}: no SSH host maps to it (fleets.NAME.host or hosts in the "
                "config), so there is no dashboard to open",
                severity="warning",
            )
        elif self.open_host is None:
            self.notify(f"{row.instance}: opening hosts is off here", severity="warning")
        else:
            self.push_screen(HostScreen(self.open_host(row)))

    def on_unmount(self) -> None:
        gctune.release()


def run_fleet_dashboard(
    source: FleetSource,
    *,
    config: Config | None = None,  # hosts' profiles for the dashboards `enter` opens
    accept_new_host_key: bool = False,
    theme: str | None = None,
    interval_s: float = INTERVAL_S,
    before_run: Callable[[App], None] | None = None,  # e.g. install the lifeline on app.exit
) -> int:
    """The fleet table until the user quits (0); the source is closed on the way out."""
    config = config or Config()
    app = FleetApp(
        source,
        row_opener(config, accept_new_host_key),
        interval_s=interval_s,
        theme=theme or config.theme,
        keys=config.keys,
    )
    if before_run is not None:
        before_run(app)

    async def main() -> None:
        try:
            await app.run_async()
        finally:
            await source.close()

    asyncio.run(main())
    return 0
