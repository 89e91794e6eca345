"""The footer keeps only the keys it shows, however often the bindings change."""

from __future__ import annotations

import gc

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets._footer import FooterKey

from sgwatch.ui.widgets.footer import Footer


class Keys(App):
    BINDINGS = [Binding(k, f"nothing('{k}')", f"key {k}") for k in "abcd"]

    def compose(self) -> ComposeResult:
        yield Footer()

    def action_nothing(self, key: str) -> None:
        pass


def alive_keys() -> int:
    gc.collect()
    return sum(isinstance(o, FooterKey) for o in gc.get_objects())


async def test_changed_bindings_leave_no_footer_keys_behind() -> None:
    app = Keys()
    async with app.run_test(size=(120, 10)) as pilot:
        await pilot.pause()
        shown = len(app.query(FooterKey))
        assert shown >= 4
        for _ in range(30):
            app.screen.refresh_bindings()
            await pilot.pause(0.02)
        await pilot.pause(0.2)
        assert len(app.query(FooterKey)) == shown  # still showing every key
        assert alive_keys() == shown  # Textual's own Footer: one more per key and change
