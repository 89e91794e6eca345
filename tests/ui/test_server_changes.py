"""The main screen says what the server turned off that costs speed, why, and the fix."""

from __future__ import annotations

from textual.widgets import Static

from sgwatch.live.watch import Watch
from tests.conftest import settle
from tests.ui.test_dashboard import SIZE, dashboard, text
from tests.unit.test_speed import seed_log


async def test_the_auto_disabled_piecewise_graphs_are_on_the_main_screen_with_the_reason():
    w = Watch("ct129")
    w.feed(seed_log().encode())
    app, clock = dashboard(w)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        changes = " ".join(text(app.query_one("#server-changes", Static)).split())
        assert changes.startswith("⚠ changed by the server, costs speed")
        assert (
            "• piecewise CUDA graphs off (prefill, extend): Qwen3_5ForConditionalGeneration "
            "is multimodal → --enforce-piecewise-cuda-graph" in changes
        )
        assert "overlap scheduler off" in changes
        checklist = text(app.query_one("#checklist", Static))
        assert "– Compile          off" in checklist  # never pending: it will not come
        assert "· Compile" not in checklist


async def test_a_run_with_nothing_changed_shows_no_box():
    w = Watch("ct129")
    w.feed(
        b"[2026-01-01 10:00:00] server_args=ServerArgs(model_path='m', tp_size=1,"
        b" enforce_piecewise_cuda_graph=True, disable_piecewise_cuda_graph=False)\n"
    )
    app, clock = dashboard(w)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot, clock)
        assert not app.query_one("#server-changes", Static).display
        assert "· Compile" in text(app.query_one("#checklist", Static))
