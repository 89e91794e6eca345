"""`b`: the bench probe in a dialog: progress while it runs, esc cancels, then the result.

The requests go through the controller's port forward; a completed bench is
kept with the watched run (the roofline uses its batch-1 rate) and in the
history (the experiments table shows it). Cancelling the worker cancels every
request task, which closes their streams: the server aborts them.
"""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import ProgressBar, Static
from textual.worker import Worker, WorkerState

from sgwatch.control.bench_probe import (
    BenchFailed,
    BenchProgress,
    BenchResult,
    BenchSettings,
    run_bench,
)
from sgwatch.control.controller import Controller
from sgwatch.transport.errors import TransportError


class BenchScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q", "close", "cancel / close")]
    DEFAULT_CSS = """
    BenchScreen { align: center middle; }
    BenchScreen > Vertical { width: 110; max-width: 95%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 1 2; }
    BenchScreen #bench-status { height: auto; }
    BenchScreen #bench-status.error { color: $error; }
    BenchScreen #bench-result { height: auto; }
    """

    def __init__(self, ctl: Controller, settings: BenchSettings) -> None:
        super().__init__()
        self.ctl, self.settings = ctl, settings
        self.result: BenchResult | None = None
        self._worker: Worker[None] | None = None

    def compose(self) -> ComposeResult:
        s = self.settings
        label = escape(self.ctl.session.watch.label)
        with Vertical():
            yield Static(
                f"[b]bench[/b] · {label} · {len(s.prompts)} prompts, {s.max_tokens} tokens each, "
                f"concurrency {' then '.join(map(str, s.phases))}"
            )
            yield ProgressBar(show_eta=False, id="bench-bar")
            yield Static("checking that the server is ready…", id="bench-status")
            yield Static(id="bench-result")
            yield Static("[dim]esc cancels the bench (every request stops)[/dim]", id="bench-hint")

    def on_mount(self) -> None:
        self._worker = self._run()

    @work(group="bench", exit_on_error=False)
    async def _run(self) -> None:
        import httpx  # loaded with the first bench, as the bench module does

        from sgwatch.control.server_http import NotReady

        try:
            async with self.ctl.server_api() as api:
                result = await run_bench(api, self.settings, self._progress)
        except (NotReady, BenchFailed, TransportError, httpx.HTTPError, ValueError) as e:
            self._status(escape(str(e) or type(e).__name__), error=True)
            self._done()
            return
        self.result = result
        self.ctl.record_bench(result)
        self.query_one("#bench-bar", ProgressBar).update(total=1, progress=1)
        self._status(f"done: {escape(result.target)}, model {escape(result.model or '?')}")
        self.query_one("#bench-result", Static).update(render(result))
        self._done()

    def _progress(self, p: BenchProgress) -> None:
        self.query_one("#bench-bar", ProgressBar).update(total=p.total, progress=p.done)
        self._status(f"concurrency {p.concurrency}: {p.done}/{p.total} requests done")

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#bench-status", Static)
        status.set_class(error, "error")
        status.update(text)

    def _done(self) -> None:
        self.query_one("#bench-hint", Static).update("[dim]esc closes[/dim]")

    def action_close(self) -> None:
        w = self._worker
        if w is not None and w.state in (WorkerState.PENDING, WorkerState.RUNNING):
            w.cancel()
            self.notify("bench cancelled: its requests were stopped", severity="warning")
        self.dismiss()


def render(r: BenchResult) -> Table:
    """A row per phase: aggregate and per-request decode tok/s, TTFT and ITL."""
    t = Table(box=None, padding=(0, 1), header_style="bold")
    for name in ("concurrency", "requests", "aggregate tok/s", "per request tok/s"):
        t.add_column(name, justify="right")
    for name in ("TTFT p50", "TTFT p95", "ITL p50", "ITL p95"):
        t.add_column(name, justify="right")
    for p in r.phases:
        t.add_row(
            str(p.concurrency),
            str(len(p.requests)),
            f"{p.aggregate_tok_s:,.1f}",
            _num(p.decode_tok_s),
            _ms(p.ttft_p50_s),
            _ms(p.ttft_p95_s),
            _ms(p.itl_p50_s),
            _ms(p.itl_p95_s),
        )
    accept = "-" if r.accept_length is None else f"{r.accept_length:.2f}"
    t.caption = f"spec accept length {accept} · {r.max_tokens} tokens a request"
    return t


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:,.1f} ms"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"
