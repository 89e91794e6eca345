"""The warmup checklist and the graph capture in progress, with N/M, rate and ETA.

Below them, what the server changed on its own that costs speed (a feature it
turned off, and why, and the flag that keeps it on), as the engine reads it from
the resolved settings; a phase those settings rule out is never shown pending.
"""

from __future__ import annotations

import textwrap

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import ProgressBar, Static

from sgwatch.control.probes import ProbeView
from sgwatch.core.display import duration
from sgwatch.core.eta import ReadyEta
from sgwatch.core.state import Capture, ServerState, seconds_between
from sgwatch.core.summary import compile_words
from sgwatch.engines import Difference, of_log
from sgwatch.ui.badges import PHASE_LABELS
from sgwatch.ui.quiet import show

_ORDER = list(PHASE_LABELS)
_BASIS_WIDTH = 36  # what the ETA to ready is built from, wrapped within the panel


class WarmupPanel(Vertical):
    DEFAULT_CSS = """
    WarmupPanel { height: auto; border: round $panel; padding: 0 1; }
    WarmupPanel > #capture-bar { margin-top: 1; }
    WarmupPanel ProgressBar Bar { width: 1fr; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        # Kept, not queried: a query walks the DOM matching selectors on every frame.
        self._checklist = Static(id="checklist")
        self._bar = ProgressBar(id="capture-bar", total=1, show_eta=False)
        self._line = Static(id="capture-line")
        self._changes = Static(id="server-changes")

    def compose(self) -> ComposeResult:
        yield self._checklist
        yield self._bar
        yield self._line
        yield self._changes

    def on_mount(self) -> None:
        self.border_title = "Warmup"

    def show(
        self,
        s: ServerState,
        reference_s: float | None = None,
        eta: ReadyEta | None = None,
        probe: ProbeView | None = None,
    ) -> None:
        """`reference_s`: the nearest command's last warmup, and `eta` the time left to
        ready by earlier runs, both from the restart history; `probe`: a pod's budget."""
        show(self._checklist, _checklist(s, reference_s, eta, probe))
        changes = self._changes
        found = of_log(s.engine).speed_changes(s.args, None, s.weights.arch)
        changes.display = bool(found)
        if found:
            show(changes, _changes(found))
        bar, line = self._bar, self._line
        progress = _current_progress(s)
        bar.display = line.display = progress is not None
        if progress is not None:
            done, total, text = progress
            if (bar.total, bar.progress) != (total, done or 0):
                bar.update(total=total, progress=done or 0)
            show(line, text)
        elif bar.total is None:
            # An indeterminate bar animates at 15 Hz even while hidden.
            bar.update(total=1, progress=0)


def _checklist(
    s: ServerState,
    reference_s: float | None,
    eta: ReadyEta | None,
    probe: ProbeView | None = None,
) -> Content:
    spent: dict[str, float] = {}
    for p in s.phases:
        if p.seconds is not None:
            spent[p.name] = spent.get(p.name, 0.0) + p.seconds
    current = s.state if s.state in PHASE_LABELS else None
    reached = {p.name for p in s.phases}
    latest = max((_ORDER.index(n) for n in reached), default=-1)
    if current is None and s.state in ("ready", "serving"):
        latest = len(_ORDER)
    ruled_out = of_log(s.engine).ruled_out_phases(s.args)
    rows = []
    for i, name in enumerate(_ORDER):
        took = spent.get(name)
        if name == current:
            mark, style = "▶", "bold $accent"
            last = s.phases[-1] if s.phases else None
            if last is not None and last.name == name and last.ended_at is None:
                took = (took or 0.0) + (seconds_between(last.started_at, s.now_ts) or 0.0)
        elif name in reached:
            mark, style = "✓", "$success"
        elif name in ruled_out:
            mark, style, took = "–", "$text-muted", None  # the settings say it will not come
        elif i < latest:
            mark, style = "–", "$text-muted"  # skipped, or before the part of the log we have
        else:
            mark, style = "·", "$text-muted"
        if s.state == "crashed" and s.crash and s.crash.phase == name:
            mark, style = "✗", "bold $error"
        shown = "off" if name in ruled_out and name not in reached else duration(took)
        rows.append(Content.styled(f"{mark} {PHASE_LABELS[name]:<12} {shown:>7}", style))
    if s.compile_cache is not None or s.compile_s is not None:
        said = compile_words(s.compile_cache, duration(s.compile_s))
        rows.append(Content.styled(f"  {said}", "$text-muted"))
    if s.ready:
        total = seconds_between(s.phases[0].started_at, s.ready_at) if s.phases else None
        rows.append(Content.styled(f"✓ Ready        {duration(total):>7}", "bold $success"))
        if s.server_startup_s is not None:  # its own clock: from launch to engine up
            said = duration(s.server_startup_s)
            rows.append(Content.styled(f"  server says  {said:>7}", "$text-muted"))
    if reference_s is not None:
        rows.append(Content.styled(f"  last time    {duration(reference_s):>7}", "$text-muted"))
    if eta is not None and not s.ready and s.state != "crashed":
        left = "~" + duration(eta.seconds)
        rows.append(Content.styled(f"  {'ready in':<12} {left:>7}", "bold"))
        for line in textwrap.wrap(eta.basis, _BASIS_WIDTH):
            rows.append(Content.styled(f"  {line}", "$text-muted"))
    if probe is not None and not s.ready:
        rows.extend(_probe_rows(probe))
    return Content("\n").join(rows)


def _probe_rows(probe: ProbeView) -> list[Content]:
    """The pod's warmup budget under the ETA, and the warning while there is still time."""
    allows = f"  {probe.kind} probe allows {duration(probe.budget_s)}"
    rows = [Content.styled(allows, "bold $warning" if probe.warning else "$text-muted")]
    if probe.warning:
        wrapped = textwrap.wrap(probe.warning, _BASIS_WIDTH)
        rows.append(Content.styled(f"⚠ {wrapped[0]}", "bold $warning"))
        rows.extend(Content.styled(f"  {line}", "$warning") for line in wrapped[1:])
    return rows


def _changes(found: list[Difference]) -> Content:
    rows = [Content.styled("⚠ changed by the server, costs speed", "bold $warning")]
    for d in found:
        keep = f" → {d.override_flag}" if d.override_flag else ""
        rows.append(Content.assemble((f"• {d.effect}: ", "$warning"), f"{d.why}{keep}"))
    return Content("\n").join(rows)


def _current_progress(s: ServerState) -> tuple[int | None, int | None, Content] | None:
    """The bar of what the server is doing now: weight shards or a graph capture."""
    if s.state == "loading_weights" and s.weights.total:
        w = s.weights
        return w.done, w.total, Content(f"weights {w.done or 0}/{w.total} shards")
    if s.state in ("capturing_graphs", "compiling"):
        cap = next((c for c in reversed(s.captures) if c.open), None)
        if cap is not None:
            return cap.done, cap.total, _capture_line(cap)
    return None


def _capture_line(cap: Capture) -> Content:
    done = "?" if cap.done is None else str(cap.done)
    total = "?" if cap.total is None else str(cap.total)
    what = "num_tokens" if cap.kind in ("piecewise", "compile", "prefill") else "bs"
    parts = [f"{cap.kind} {done}/{total}"]
    if (eta := cap.eta_s) is not None:  # before the rest: a narrow panel keeps it
        parts.append(f"ETA {duration(eta)}")
    if cap.current:
        parts.append(f"{what}={cap.current}")
    if cap.rate and not cap.rate.startswith("?"):
        parts.append(cap.rate)
    return Content("  ".join(parts))
