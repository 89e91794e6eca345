"""The footer shows the keys that apply, keeps only those, and rebuilds them only when
they change."""

from __future__ import annotations

import gc

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Button
from textual.widgets._footer import FooterKey

from sgwatch.ui.widgets.footer import Footer
from tests.conftest import until


class Keys(App):
    BINDINGS = [Binding(k, f"nothing('{k}')", f"key {k}") for k in "abcd"]
    held = False  # while held, key d is shown disabled

    def compose(self) -> ComposeResult:
        yield Button("a button")
        yield Footer()

    def action_nothing(self, key: str) -> None:
        pass

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if self.held and parameters == ("d",) else True


def alive_keys() -> int:
    gc.collect()
    return sum(isinstance(o, FooterKey) for o in gc.get_objects())


def disabled(app: App) -> list[str]:
    return [k.key for k in app.query(FooterKey) if k.has_class("-disabled")]


class Counted(Footer):
    recomposed = 0

    async def recompose(self) -> None:
        self.recomposed += 1
        await super().recompose()


class CountedKeys(Keys):
    def compose(self) -> ComposeResult:
        yield Button("a button")
        yield Counted()


async def test_changed_bindings_leave_no_footer_keys_behind() -> None:
    app = CountedKeys()
    async with app.run_test(size=(120, 10)) as pilot:
        footer = app.query_one(Counted)
        await until(pilot, lambda: len(app.query(FooterKey)) >= 4)
        shown = len(app.query(FooterKey))
        for i in range(30):
            app.held = i % 2 == 0
            app.screen.refresh_bindings()
            await until(pilot, lambda: disabled(app) == (["d"] if app.held else []))
        assert footer.recomposed == 31  # the first keys and every change
        assert len(app.query(FooterKey)) == shown  # still showing every key
        assert alive_keys() == shown  # Textual's own Footer: one more per key and change


async def test_the_keys_are_rebuilt_only_when_what_they_show_changes() -> None:
    app = CountedKeys()
    async with app.run_test(size=(120, 10)) as pilot:
        footer = app.query_one(Counted)
        await until(pilot, lambda: len(app.query(FooterKey)) >= 4)
        keys = set(app.query(FooterKey))
        for _ in range(3):  # a focus going and coming back: the same keys apply
            app.set_focus(None)
            await pilot.pause(0.05)
            app.query_one(Button).focus()
            await pilot.pause(0.05)
        app.held = True
        app.screen.refresh_bindings()
        await until(pilot, lambda: disabled(app) == ["d"])  # a real change is shown
        assert not keys & set(app.query(FooterKey))
        assert footer.recomposed == 2  # the first keys and the change; none for the focus
