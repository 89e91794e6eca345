"""Textual's Footer, without the keys it leaves behind or rebuilds for nothing.

Each time the bindings may have changed (a focus moved, a search bar came or went, a tab
switched), Textual's Footer composes its keys anew, and each new key binds its `compact`
to the footer's through a watcher on the footer. The footer's `compact` never changes,
and only a change prunes the watchers of removed keys, so every key ever shown stayed
alive, its styles and rendered lines with it: the soak found one footer key kept per key
shown and per binding change, hours of a dashboard's memory (docs/RELIABILITY.md).
Touching `compact` after keys are removed prunes them.

Most of those changes leave the keys as they were: the footer looks once after the
refresh and changes nothing then. The rest mostly flip between the same few sets (a
search's input takes the letter keys while it has the focus, and gives them back): the
keys of the last KEPT sets stay mounted, hidden, and are shown again when their set
applies again. Removed keys are garbage in cycles that wait for a full collection
(docs/design/memory.md); a search made 13 of them a minute.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.compose import compose
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer as TextualFooter

KEPT = 4  # sets of keys kept mounted (hidden while another applies)


class Footer(TextualFooter):
    _composed: tuple[Any, ...] | None = None  # what the keys shown were composed from
    _checking = False  # a look after the next refresh is queued

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # the footer's top-level widgets per set of keys, the one shown last
        self._kept: dict[tuple[Any, ...] | None, list[Widget]] = {}

    def _shown(self, screen: Screen) -> tuple[Any, ...]:
        """What `compose` builds its keys from: the bindings shown, and the palette's."""
        active = screen.active_bindings
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        return tuple(
            (b.key, self.app.get_key_display(b), b.description, b.action, b.group, on, tip)
            for (_, b, on, tip) in active.values()
            if b.show or (palette and (b, on, tip) == palette[1:])
        )

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._composed = self._shown(self.screen)
        return super().compose()

    def bindings_changed(self, screen: Screen) -> None:
        # Textual's own, but one look after the refresh (as Textual's recompose waits for
        # it: the app's bindings read its widgets) for any number of changes, and the keys
        # composed again only when they would differ.
        self._bindings_ready = True
        if not screen.app.app_focus or self._checking:
            return
        if self.is_attached and screen is self.screen:
            self._checking = True
            self.call_after_refresh(self._compose_if_changed)

    async def _compose_if_changed(self) -> None:
        self._checking = False
        if self.is_attached and self._shown(self.screen) != self._composed:
            await self.recompose()

    async def recompose(self) -> None:
        """The keys that apply now: shown again if kept, else composed and mounted."""
        if not self.is_attached or self._pruning:
            return
        kept = self._kept
        if self._composed not in kept:  # composed as the footer was mounted
            kept[self._composed] = list(self.children)
        shown = self._shown(self.screen) if self._bindings_ready else None
        async with self.batch():
            for widget in kept[self._composed]:
                widget.display = False
            if (again := kept.pop(shown, None)) is not None:
                for widget in again:
                    widget.display = True
                self._composed = shown
            else:
                if len(kept) >= KEPT:  # the oldest go first: the current set is the newest
                    while len(kept) >= KEPT:
                        await self.remove_children(kept.pop(next(iter(kept))))
                    self.mutate_reactive(TextualFooter.compact)  # drops their watchers
                again = compose(self)  # sets _composed
                await self.mount_all(again)
            kept[self._composed] = again
