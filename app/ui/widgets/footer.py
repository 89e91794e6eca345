"""Textual's Footer, without the keys it leaves behind.

Each time the bindings change, Textual's Footer composes its keys anew, and each new key
binds its `compact` to the footer's through a watcher on the footer. The footer's
`compact` never changes, and only a change prunes the watchers of removed keys, so every
key ever shown stayed alive, its styles and rendered lines with it: the soak found one
footer key kept per key shown and per binding change, hours of a dashboard's memory
(docs/RELIABILITY.md). Touching `compact` after each recompose prunes them.
"""

from __future__ import annotations

from textual.widgets import Footer as TextualFooter


class Footer(TextualFooter):
    async def recompose(self) -> None:
        await super().recompose()
        self.mutate_reactive(TextualFooter.compact)  # drops the removed keys' watchers
