"""The dashboard as a person drives it: keys in, what the screen shows out."""

from pathlib import Path

import pytest
from textual.events import Key
from textual.widgets import ProgressBar, Static, TabbedContent

from sgwatch.live.watch import Watch
from sgwatch.ui.app import KEYS, SgwatchApp
from sgwatch.ui.help import HelpScreen
from sgwatch.ui.hostpane import HostPane
from sgwatch.ui.overview import Overview
from sgwatch.ui.widgets.crash import CrashBanner
from sgwatch.ui.widgets.gpus import GpuPanel
from sgwatch.ui.widgets.header import HostHeader
from sgwatch.ui.widgets.logview import LogView
from tests.conftest import FIXTURES, Clock, settle, until

SAMPLE = Path(__file__).resolve().parents[2] / "app/samples/qwen27b-tp2-warmup.log"
SIZE = (140, 45)


def watch_of(path: Path, label: str = "ct129", upto: int | None = None) -> Watch:
    w = Watch(label)
    data = path.read_bytes()
    w.feed(data if upto is None else data[:upto])
    if upto is None:
        w.end()
    return w


def text(widget) -> str:
    return str(widget.render())


def dashboard(*watches: Watch, **kwargs) -> tuple[SgwatchApp, Clock]:
    """The app over these watches, on a clock the test moves."""
    clock = Clock()
    return SgwatchApp(list(watches), clock=clock, **kwargs), clock


def last_line(app) -> str:
    lines = app.query_one(LogView).lines
    return lines[-1] if lines else ""


async def test_capture_in_progress_shows_bar_counts_and_eta():
    app, clock = dashboard(watch_of(FIXTURES / "sglang/glued_tqdm_frames.log"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        assert "◆ CAPTURING" in text(app.query_one(HostHeader))
        bar = app.query_one("#capture-bar", ProgressBar)
        assert (bar.progress, bar.total) == (2, 3)
        line = text(app.query_one("#capture-line", Static))
        assert "decode 2/3" in line and "bs=2" in line and "ETA 2s" in line
        # The other rank's glued line is in the log; bar frames are not, but live.
        log = app.query_one(LogView)
        assert any("Config file not found" in line for line in log.lines)
        assert not any("Capturing batches" in line for line in log.lines[-1:])
        assert "2/3" in text(app.query_one("#live", Static))


async def test_tqdm_frames_collapse_to_one_line_per_bar():
    app, clock = dashboard(watch_of(SAMPLE))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        lines = app.query_one(LogView).lines
        bars = [line for line in lines if "%|" in line or "% Completed" in line]
        # weights, decode capture, compile, piecewise capture: one final state each
        assert len(bars) == 4
        assert all("100%" in bar for bar in bars)
        assert "▶ SERVING" in text(app.query_one(HostHeader))


async def test_crash_banner_and_jump_to_the_crash_line():
    app, clock = dashboard(watch_of(FIXTURES / "sglang/crash_capture_oom.log"))
    async with app.run_test(size=(100, 20)) as pilot:
        await settle(app, pilot, clock)
        banner = app.query_one(CrashBanner)
        assert banner.display and "CUDA out of memory" in text(banner)
        assert "CUDA graphs" in text(banner)  # the phase it died in
        log = app.query_one(LogView)
        await pilot.press("c")
        await pilot.pause()
        top = int(log.scroll_y)
        shown = log.lines[top : top + log.size.height]
        assert log.max_scroll_y > 0 and top > 0  # it had to scroll
        assert any("Capture cuda graph failed" in line for line in shown)


async def log_of_300_lines(w: Watch, app: SgwatchApp, pilot) -> LogView:
    """The log view once 300 lines have arrived: more than a screen."""
    w.feed(b"".join(b"[2026-01-01 10:00:00] line %d\n" % i for i in range(300)))
    await until(pilot, lambda: last_line(app).endswith("line 299"))
    return app.query_one(LogView)


def log_status(app) -> str:
    return text(app.query_one("#log-status", Static))


async def test_follow_pauses_on_scroll_up_and_resumes_with_end():
    w = Watch("ct129")
    app = SgwatchApp([w])
    async with app.run_test(size=SIZE) as pilot:
        log = await log_of_300_lines(w, app, pilot)
        assert log.is_vertical_scroll_end
        log.scroll_to(y=0, animate=False, immediate=True)  # the reader scrolls up
        await pilot.pause()
        w.feed(b"[2026-01-01 10:00:01] newer line\n")
        await until(pilot, lambda: last_line(app).endswith("newer line"))
        await until(pilot, lambda: "paused" in log_status(app))
        assert log.scroll_y == 0  # the reader's place is kept
        await pilot.press("end")
        await pilot.pause()
        assert log.is_vertical_scroll_end
        assert "following" in text(app.query_one("#log-status", Static))


async def test_end_in_the_focused_log_follows_again():
    w = Watch("ct129")
    app = SgwatchApp([w])
    async with app.run_test(size=SIZE) as pilot:
        log = await log_of_300_lines(w, app, pilot)
        log.focus()
        await pilot.press("pageup", "pageup")
        await pilot.pause()
        assert not log.following
        await pilot.press("end")
        assert log.following
        w.feed(b"[2026-01-01 10:00:01] newer line\n")
        await until(pilot, lambda: last_line(app).endswith("newer line"))
        await until(pilot, lambda: "following" in log_status(app))
        assert log.is_vertical_scroll_end


async def test_search_and_level_filter():
    app, clock = dashboard(watch_of(FIXTURES / "sglang/crash_capture_oom.log"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        await pilot.press("slash", *"sigquit", "enter")
        await pilot.pause()
        assert "“sigquit” 1/1" in text(app.query_one("#log-status", Static))
        await pilot.press("w", "w")  # errors only
        await pilot.pause()
        lines = app.query_one(LogView).lines
        assert lines and all(
            "Error" in line or "Exception" in line or "sigquit" in line or "Traceback" in line
            for line in lines
        )
        assert not any("Capture cuda graph begin" in line for line in lines)


async def test_a_term_typed_ahead_of_the_search_is_the_term_not_dashboard_keys():
    """`/` and a term as fast as a paste (each key waiting before `/` is acted on): the
    term's letters are no dashboard keys (`q` would quit, `w` filter the levels), and a
    `/` inside it is text."""
    app, clock = dashboard(watch_of(FIXTURES / "sglang/crash_capture_oom.log"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        names = {"/": "slash", "\r": "enter"}
        for char in "/sigquit/w\r":
            app._driver.send_message(Key(names.get(char, char), char))
        status = app.query_one("#log-status", Static)
        await until(pilot, lambda: "“sigquit/w”" in text(status))
        assert app.is_running and len(app.screen_stack) == 1
        assert "show all" in text(status)  # no level filter came on (`w`)


async def test_keys_typed_right_after_quit_open_nothing(monkeypatch):
    """`q` and then `?` or `e` before the app has gone: a screen mounted as the app
    closed raised, and the terminal was left with a traceback."""
    app = SgwatchApp([Watch("ct129")])
    pushed: list[object] = []
    push = app.push_screen
    monkeypatch.setattr(app, "push_screen", lambda s, *a, **k: pushed.append(s) or push(s, *a, **k))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.query(".body"))
        for key, char in [("q", "q"), ("question_mark", "?"), ("l", "l")]:
            app._driver.send_message(Key(key, char))
        await until(pilot, lambda: not app.is_running)
    assert pushed == [] and app.return_code == 0


async def test_rank_filter_shows_one_rank():
    app, clock = dashboard(watch_of(SAMPLE))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        await pilot.press("r", "r")  # all -> first rank seen -> second
        await pilot.pause()
        lines = app.query_one(LogView).lines
        assert lines and all("TP1]" in line for line in lines)


async def test_layout_help_and_tabs():
    loading = SAMPLE.read_bytes().index(b"Load weight end")
    app, clock = dashboard(watch_of(SAMPLE, "ct129"), watch_of(SAMPLE, "ct130", upto=loading))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        assert len(app.query(HostPane)) == 2
        tabs = app.query_one(TabbedContent)
        assert tabs.active == "overview"  # several hosts: the fleet first
        rows = app.query_one(Overview).table
        assert [rows.text(key, "state") for key in ("0", "1")] == [
            "▶ serving · ready in 2m24s",
            "◆ weights 12/12",
        ]
        await pilot.press("l")  # a host's key: nothing to lay out on the overview
        await pilot.press("1")
        assert tabs.active == "host-0"
        log = app.query_one("#host-0 HostPane").log_pane
        assert log.region.x > 0  # beside the panels
        await pilot.press("l")
        await until(pilot, lambda: log.region.x == 0)  # below them, the full width
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        tabs.active = "host-1"
        await pilot.pause()
        assert "LOADING" in text(app.pane.query_one(HostHeader))


async def test_no_host_key_acts_on_the_overview():
    app, clock = dashboard(watch_of(SAMPLE, "ct129"), watch_of(SAMPLE, "ct130"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        rows = app.query_one(Overview).table
        host_keys = [b for b in KEYS if b.action.split("(")[0] not in ("tab", "help", "quit")]
        for binding in host_keys:
            rows.focus()  # as the overview opens; `/` moves to its filter
            await pilot.press(binding.key)  # `n` once raised: no host on this tab
            await pilot.pause()
        assert len(host_keys) >= 14  # every host key pressed
        assert app.is_running
        assert app.query_one(TabbedContent).active == "overview"
        assert len(app.screen_stack) == 1  # no panel or dialog opened


async def test_ready_and_crash_are_announced():
    ok, bad = Watch("ok"), Watch("bad")
    ok.caught_up = bad.caught_up = True  # following live: what comes now is news
    app = SgwatchApp([ok, bad], bell=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:  # toasts drawn
        ok.feed(SAMPLE.read_bytes())
        bad.feed((FIXTURES / "sglang/crash_capture_oom.log").read_bytes())
        await until(pilot, lambda: len(toasts(app)) >= 2)
        messages = toasts(app)
        assert any("ok: ready after 2m24s" in m for m in messages)  # under the title
        assert any("bad: crashed during CUDA graphs" in m for m in messages)


def toasts(app) -> list[str]:
    """The notifications on screen, as they read."""
    return [text(t) for t in app.screen.query("Toast")]


def _warming() -> Watch:
    data = SAMPLE.read_bytes()
    return watch_of(SAMPLE, upto=data.index(b"Compiling num tokens (num_tokens=512)"))


SCREENS = {
    "warmup": _warming,
    "serving": lambda: watch_of(SAMPLE),
    "crashed": lambda: watch_of(FIXTURES / "sglang/crash_capture_oom.log"),
}


@pytest.mark.parametrize("theme", ["sgwatch-dark", "sgwatch-light"])
@pytest.mark.parametrize("screen", sorted(SCREENS))
def test_main_screen_snapshot(snap_compare, screen, theme):
    app, clock = dashboard(SCREENS[screen](), theme=theme)
    assert snap_compare(
        app, terminal_size=(120, 40), run_before=lambda pilot: settle(app, pilot, clock)
    )


async def test_gpu_panel_hidden_without_data_and_one_row_per_gpu():
    w = watch_of(SAMPLE)
    app, clock = dashboard(w)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        panel = app.query_one(GpuPanel)
        assert not panel.display or panel.has_class("empty")
        w.feed_gpu(
            b"0, NVIDIA H100 80GB HBM3, 87, 61234, 81559, 312.50, 64\n"
            b"1, NVIDIA H100 80GB HBM3, 12, 1024, 81559, 95.00, 41\n"
        )
        await settle(app, pilot, clock)  # rows mount on one frame and draw on a later one
        assert not panel.has_class("empty")
        assert "2 × NVIDIA H100 80GB HBM3" in panel.border_title
        stats = [text(s) for s in panel.query(".stats")]
        assert stats[0].startswith("  87%") and "59.8/80G" in stats[0] and "64°C" in stats[0]
        assert "95W" in stats[1]


async def test_theme_switch_and_maximise_keys():
    w = watch_of(SAMPLE)
    app, clock = dashboard(w)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        assert app.theme == "sgwatch-dark"
        app.theme = "sgwatch-light"  # what the palette's theme command does
        await pilot.pause()
        assert app.current_theme.dark is False
        await pilot.press("m")
        await pilot.pause()
        assert app.screen.maximized is app.pane.log_pane
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.maximized is None
        w.feed_gpu(b"0, NVIDIA H100 80GB HBM3, 87, 61234, 81559, 312.50, 64\n" * 3)
        await settle(app, pilot, clock)
        await pilot.press("g")
        await settle(app, pilot, clock)  # charts redraw at most every 2 s
        panel = app.query_one(GpuPanel)
        assert app.screen.maximized is panel
        chart = panel.query_one("#gpu-util-chart")
        assert chart.display and "util %" in str(chart.render())


async def test_throughput_chart_has_axes_and_units():
    app, clock = dashboard(watch_of(SAMPLE))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)  # drawn once the layout has given it a size
        chart = str(app.query_one("#tput-chart").render())
        assert "tok/s" in chart and "seconds before the latest sample" in chart
        assert "63.90" in chart  # the y axis spans the samples' range


async def test_charts_draw_when_shown_or_resized_on_a_quiet_screen():
    # Nothing new arrives, so only the charts' new size can bring them up to date.
    w = watch_of(SAMPLE)
    app, clock = dashboard(w)
    async with app.run_test(size=SIZE) as pilot:
        w.feed_gpu(b"0, NVIDIA H100 80GB HBM3, 87, 61234, 81559, 312.50, 64\n" * 3)
        await settle(app, pilot, clock)  # the GPU stream has stopped; the screen is quiet
        await pilot.press("g")
        await settle(app, pilot, clock)
        chart = app.query_one(GpuPanel).query_one("#gpu-util-chart")
        assert "util %" in text(chart)
        await pilot.press("escape")
        await settle(app, pilot, clock)
        tput = app.query_one("#tput-chart")
        beside = max(map(len, text(tput).splitlines()))
        await pilot.press("l")  # panels above the log: the chart gets the full width
        await settle(app, pilot, clock)
        above = max(map(len, text(tput).splitlines()))
        assert beside < above <= tput.size.width
