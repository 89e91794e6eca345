"""The header's engine and run identity, its run clock while the log is quiet, and the
palette's theme commands."""

from textual.command import CommandPalette

from sgwatch.live.linkstate import LIVE, stale
from sgwatch.live.watch import Watch
from sgwatch.ui.widgets.header import HostHeader
from tests.conftest import FIXTURES
from tests.ui.test_dashboard import SIZE, dashboard, settle, text, until, watch_of


def run_clock(app) -> float:
    """The header's `run` time, in seconds."""
    shown = text(app.query_one(HostHeader)).split("run ", 1)[1].split()[0]
    minutes, _, secs = shown.rpartition("m")
    return int(minutes or 0) * 60 + int(secs.rstrip("s"))


async def test_the_header_names_no_engine_until_a_line_does_then_shows_the_run():
    w = Watch("ct129")
    w.engine_version = "0.5.10"  # discovery's, before any log line
    app, clock = dashboard(w)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        shown = text(app.query_one(HostHeader))
        assert "0.5.10" in shown and "sglang" not in shown and "engine ?" not in shown
        w.feed(
            b"[2026-01-01 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', "
            b"tp_size=2, dp_size=1, ep_size=1)\n"
        )
        await until(
            pilot, lambda: "sglang 0.5.10  Qwen/Qwen3-8B  TP2 " in text(app.query_one(HostHeader))
        )


async def test_the_run_clock_goes_on_while_a_live_log_is_quiet():
    w = watch_of(FIXTURES / "sglang/piecewise_compile_0_5.log", upto=3000)
    w.link = LIVE
    app, clock = dashboard(w)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        before = run_clock(app)
        clock.advance(90.0)  # nothing more in the log for a minute and a half
        await until(pilot, lambda: run_clock(app) == before + 90)
        w.link = stale("connection lost")  # not followed live: the log's time alone
        await until(pilot, lambda: run_clock(app) < before + 90)
        frozen = run_clock(app)
        clock.advance(60.0)
        assert not app.query_one(HostHeader).clock_due  # the app draws nothing for it
        app.query_one(HostHeader).show(w)
        assert run_clock(app) == frozen


async def test_the_palette_finds_the_light_theme_by_name():
    app, clock = dashboard(watch_of(FIXTURES / "sglang/piecewise_compile_0_5.log"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        assert app.theme == "sgwatch-dark"
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"light")
        palette = app.screen

        def offered() -> list[str]:
            options = palette.query_one("CommandList").options
            return [str(o.prompt) for o in options]

        await until(pilot, lambda: any("sgwatch-light" in o for o in offered()))
        assert "sgwatch-light" in offered()[0]  # the best match
        await pilot.press("enter")
        await until(pilot, lambda: app.theme == "sgwatch-light")
        assert app.current_theme.dark is False
