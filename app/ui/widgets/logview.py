"""A bounded log view that follows its tail, drawn line by line (as toolong does).

Why not Textual's `Log`: each `write_lines` sets `virtual_size`, a reactive with
layout=True, so every write re-lays out the whole screen (~45 ms on a 2-core VM),
and in textual 8.2 its line cache is only filled while text is selected, so every
visible line is highlighted again on every frame. Here a write only updates the
scrollbars (their visibility never changes: overflow is `scroll`), and rendered
lines are cached by their number in the stream, which survives pruning.
Lines arrive sanitised (core.linesplit removes control characters); blank lines
are kept, as the server wrote them (`Log` dropped them). A flood is written in
batches at most WRITE_EVERY_S apart: no one reads thousands of lines a second,
and each write redraws the whole view.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from math import ceil

from rich.cells import cell_len
from rich.highlighter import Highlighter
from rich.style import Style
from rich.text import Text
from textual.actions import SkipAction
from textual.cache import LRUCache
from textual.geometry import Size
from textual.reactive import Reactive
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.selection import Selection
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

WRITE_EVERY_S = 0.25  # while more than CALM_LINES arrive at once
CALM_LINES = 50

# Rendered lines kept: a few screens. Each strip also keeps the crop and offset variants
# Textual derives from it (up to six strips a line, churning as lines scroll by); 1,024
# lines a view left Python's allocator holding tens of MB more (docs/RELIABILITY.md).
CACHED_SCREENS, CACHED_MIN = 3, 128


def _cells(line: str) -> int:
    if "\t" in line:
        line = line.expandtabs()
    return len(line) if line.isascii() else cell_len(line)  # ASCII: no control characters


def _thumb(bar: ScrollBar) -> tuple[int, int] | None:
    """Where ScrollBarRender draws the thumb, in eighths of a cell (None: no thumb)."""
    size, virtual, window = bar.size.height, bar.window_virtual_size, bar.window_size
    if not (window and size and virtual and size != virtual):
        return None
    thumb = max(1, window / (virtual / size))
    start = int((size - thumb) * (bar.position / (virtual - window)) * 8)
    end = start + ceil(thumb * 8)
    return min(max(start, 0), 8 * size), min(max(end, 0), 8 * size)  # as drawn: clipped


class LogView(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    LogView {
        background: $surface;
        color: $text;
        overflow: scroll;
        &:focus { background-tint: $foreground 5%; }
    }
    """

    def __init__(
        self,
        highlighter: Highlighter,
        max_lines: int,
        clock: Callable[[], float] = time.monotonic,  # tests advance a clock of their own
        on_following: Callable[[], None] = lambda: None,  # following started or stopped
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self._following = True  # stays at the tail until the reader scrolls up
        self._thumb_held = False  # a write compares the thumb once, at its end
        self._on_following = on_following
        self.highlighter = highlighter
        self._clock = clock
        self.max_lines = max_lines
        self.lines: list[str] = []
        self._first = 0  # stream number of lines[0]: the cache key survives pruning
        self._unmoved = 0  # lines pruned above a reader's place while hidden: moved when drawn
        self._width = 0
        self._cache: LRUCache[int, Strip] = LRUCache(CACHED_MIN)
        self._style: Style | None = None  # `rich_style` walks the ancestors on every call
        self._pending: deque[str] = deque(maxlen=max_lines)  # older ones would be pruned
        self._written_at = 0.0
        self._flush_timer: Timer | None = None

    @property
    def following(self) -> bool:
        return self._following

    @following.setter
    def following(self, value: bool) -> None:
        if value != self._following:
            self._following = value
            self._on_following()

    @property
    def allow_select(self) -> bool:
        return True

    # -- content -------------------------------------------------------------

    def add_lines(self, lines: list[str], draw: bool = True) -> None:
        """`draw` False: held (the view is hidden), written with the next drawn."""
        self._pending.extend(lines)
        if not draw:  # the oldest written go as the held ones come: a scrollback in all
            self._prune(len(self.lines) + len(self._pending) - self.max_lines)
            return
        if self._flush_timer is not None or not self._pending:
            return
        wait = self._written_at + WRITE_EVERY_S - self._clock()
        if len(self._pending) <= CALM_LINES or wait <= 0:
            self.flush()
        else:
            self._flush_timer = self.set_timer(wait, self.flush)

    def flush(self) -> None:
        """Write the lines held back (also before reading `lines`)."""
        if self._flush_timer is not None:
            self._flush_timer.stop()
            self._flush_timer = None
        self._written_at = self._clock()
        lines = list(self._pending)
        self._pending.clear()
        if lines:
            self._write(lines)

    def _write(self, lines: list[str]) -> None:
        # The thumb is compared once, after the new size and the new position: in
        # between (more lines, the view not yet at their end) it moves and comes back,
        # and each of those moves cost the bar a repaint (~1.4 ms) at every line.
        bar = self.vertical_scrollbar
        before, self._thumb_held = _thumb(bar), True
        try:
            self._add(lines)
        finally:
            self._thumb_held = False
        if self.show_vertical_scrollbar and _thumb(bar) != before:
            bar.refresh()

    def _add(self, lines: list[str]) -> None:
        self.lines.extend(lines)
        extra = self._prune(len(self.lines) - self.max_lines)
        if self._unmoved:  # keep the lines the reader is on in place
            self.scroll_to(y=self.scroll_y - self._unmoved, animate=False, immediate=True)
            self._unmoved = 0
        self._width = max(self._width, max(map(_cells, lines)))
        self._resize_content()
        if self.following:
            self.scroll_end(animate=False, immediate=True)
        if self.following or extra > 0:  # else the new lines are below the view
            # The text only: a bare refresh() repaints both scrollbars and the corner
            # too (~0.3 % of a core at one line a second); they repaint themselves
            # when their thumbs move.
            self.refresh(self.size.region)

    def _prune(self, extra: int) -> int:
        """Drop up to `extra` of the oldest lines; how many went.

        A reader's place moves up by as many at the next write: moving it at once
        would repaint a hidden view, and Textual maps the whole screen again after
        any widget it does not show asked for a repaint.
        """
        extra = max(0, min(extra, len(self.lines)))
        if extra:
            del self.lines[:extra]
            self._first += extra
            if not self.following:
                self._unmoved += extra
        return extra

    def clear(self) -> None:
        self._pending.clear()
        self.flush()  # only stops the timer
        self._first += len(self.lines)
        self.lines.clear()
        self._unmoved = 0
        self._width = 0
        self._resize_content()
        self.refresh()

    def rehighlight(self) -> None:
        """The highlighter's settings changed (a search term)."""
        self._cache.clear()
        self.refresh()

    def _resize_content(self) -> None:
        size, old = Size(self._width, len(self.lines)), self.virtual_size
        if size == old:
            return
        # Only the scrollbars depend on it: no layout pass for the screen.
        self.set_reactive(Widget.virtual_size, size)
        if size.width == old.width and size.height > old.height and self.show_vertical_scrollbar:
            # The usual case, a few more lines: only the vertical thumb can move;
            # `_scroll_update` repaints both bars.
            self._move_thumb(ScrollBar.window_virtual_size, size.height)
        else:
            self._scroll_update(size)

    # -- following -----------------------------------------------------------

    def action_scroll_end(self) -> None:
        # End is the app's "follow" (flush, tail, stay there). ScrollView's own would
        # animate for a second towards the end as it was, stopping short of the lines
        # that arrive meanwhile: the view then never followed again.
        raise SkipAction()

    def watch_scroll_y(self, old: float, new: float) -> None:
        # ScrollView's, except that the scrollbar repaints only if its thumb moved.
        if self.show_vertical_scrollbar:
            self._move_thumb(ScrollBar.position, new)
        if round(old) != round(new):
            self.refresh(self.size.region)
        if not self.size:
            return  # hidden: moved by a write, not a reader (Textual reads no size as the end)
        if self.is_vertical_scroll_end:
            self.following = True
        elif new < old:
            self.following = False  # the reader scrolled up (not a resize clamping to the end)

    def on_resize(self) -> None:
        self._cache.maxsize = max(CACHED_MIN, CACHED_SCREENS * self.size.height)
        if self.following:
            self.call_after_refresh(self._keep_following)

    def _keep_following(self) -> None:
        # Decided when it runs: the reader may have scrolled up since the resize.
        if self.following:
            self.scroll_end(animate=False, immediate=True)

    def _move_thumb(self, attribute: Reactive, value: float) -> None:
        """Set a vertical scrollbar value; repaint the bar only if its thumb moved by
        at least the 1/8 cell it draws (a repaint costs ~1 ms, once a line)."""
        bar = self.vertical_scrollbar
        before = _thumb(bar)
        bar.set_reactive(attribute, value)
        if not self._thumb_held and _thumb(bar) != before:
            bar.refresh()

    # -- drawing -------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()
        self._style = None

    @property
    def _base_style(self) -> Style:
        if self._style is None:
            self._style = self.rich_style
        return self._style

    def selection_updated(self, selection: Selection | None) -> None:
        self._cache.clear()
        self.refresh()

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract("\n".join(self.lines)), "\n"

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index, width, style = scroll_y + y, self.size.width, self._base_style
        if index >= len(self.lines):
            return Strip.blank(width, style)
        strip = self._strip(index)
        return strip.crop_extend(scroll_x, scroll_x + width, style).apply_offsets(scroll_x, index)

    def _strip(self, index: int) -> Strip:
        selection = self.text_selection
        key = self._first + index
        if selection is None and (cached := self._cache.get(key)) is not None:
            return cached
        line = self.lines[index].expandtabs()
        text = Text(line, no_wrap=True)
        text.stylize(self._base_style)
        text = self.highlighter(text)
        if selection is not None and (span := selection.get_span(index)) is not None:
            start, end = span
            style = self.screen.get_component_rich_style("screen--selection")
            text.stylize(style, start, len(text) if end == -1 else end)
        strip = Strip(text.render(self.app.console), text.cell_len)
        if selection is None:
            self._cache[key] = strip
        return strip
