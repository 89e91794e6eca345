"""The fleet table's rows: a scroll view that draws only the lines on screen.

Textual's DataTable measures every cell of every row it is given and renders
cells anew after any change: 500 rows sorted again took seconds. Here a row is
text per column (fleet_cells.py); a drawn line is cached by its key, text and
look (cursor, stripe), so a refresh that changes a few figures redraws those
rows only, and a new order costs nothing until it is drawn. The header line and
the first `FIXED` columns stay when the view scrolls.
"""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from sgwatch.ui.fleet_cells import COLUMNS, FIRST_FIGURE, STATE_COLUMN, STATES

FIXED = 2  # the mark and the instance
HEADING = "group:"  # the key prefix of a group's heading line
TONES = {"good": "green", "busy": "yellow", "bad": "bold red", "pending": "dim"}
BOLD = Style(bold=True)
SYMBOL_TONES = dict(STATES.values())  # the state cell's first character -> its tone
# Each column one cell wider than its text but the mark's: a space before the text.
WIDTHS = [w + (i > 0) for i, (_, w) in enumerate(COLUMNS)]
FIXED_WIDTH = sum(WIDTHS[:FIXED])
Line = tuple[str, tuple[str, ...]]  # (key, a text per column)


def _fit(col: int, text: str) -> str:
    width = WIDTHS[col]
    if col >= FIRST_FIGURE:
        if cell_len(text) >= width:
            text = set_cell_size(text, width - 1)
        return text.rjust(width)
    return set_cell_size((" " + text) if col else text, width)


class FleetTable(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    FleetTable { height: 1fr; background: $surface; }
    FleetTable > .fleet-table--header { text-style: bold; background: $panel; color: $foreground; }
    FleetTable > .fleet-table--even { background: $surface-lighten-1 50%; }
    FleetTable:dark > .fleet-table--even { background: $surface-darken-1 40%; }
    FleetTable > .fleet-table--heading { text-style: bold; color: $accent; }
    FleetTable > .fleet-table--cursor {
        background: $block-cursor-blurred-background;
        color: $block-cursor-blurred-foreground;
    }
    FleetTable:focus > .fleet-table--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    """
    COMPONENT_CLASSES = {
        "fleet-table--header", "fleet-table--even", "fleet-table--heading", "fleet-table--cursor",
    }  # fmt: skip
    BINDINGS = [
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        Binding("home", "move(-1_000_000)", show=False),
        Binding("end", "move(1_000_000)", show=False),
        Binding("left", "scroll_left", show=False),
        Binding("right", "scroll_right", show=False),
        Binding("enter", "select", show=False),
    ]

    class Highlighted(Message):
        def __init__(self, key: str | None) -> None:
            super().__init__()
            self.key = key

    class Selected(Message):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self) -> None:
        super().__init__()
        self._order: list[str] = []
        self._shown: dict[str, tuple[str, ...]] = {}
        self._cache: dict[str, tuple[tuple, Strip]] = {}  # key -> (what it was drawn from, line)
        self.cursor_row = 0
        self._looks: tuple[tuple, dict[str, Style]] = ((), {})
        self._width = 0

    @property
    def row_count(self) -> int:
        return len(self._order)

    @property
    def cursor_key(self) -> str | None:
        return self._order[self.cursor_row] if 0 <= self.cursor_row < len(self._order) else None

    def text(self, key: str, column: str) -> str:
        """A cell's text as drawn (tests and the detail line read it)."""
        return self._shown[key][[label for label, _ in COLUMNS].index(column)]

    def draw(self, lines: list[Line]) -> None:
        """These lines, in this order; only the lines on screen are drawn again, and
        only those whose text changed (or that moved) cost more than a look-up."""
        at = self.cursor_key
        keys = [key for key, _ in lines]
        changed = keys != self._order
        self._order, self._shown = keys, dict(lines)
        if changed:
            self._cache = {k: v for k, v in self._cache.items() if k in self._shown}
            self.virtual_size = Size(sum(WIDTHS), len(keys) + 1)
            self._cursor_to(keys.index(at) if at in self._shown else self.cursor_row)
        self.refresh()

    def _cursor_to(self, row: int) -> None:
        row = max(0, min(row, len(self._order) - 1))
        moved = row != self.cursor_row
        self.cursor_row = row
        body = self.scrollable_content_region.height - 1  # under the header
        top = int(self.scroll_y)
        if body > 0 and row < top:
            self.scroll_to(y=row, animate=False)
        elif body > 0 and row >= top + body:
            self.scroll_to(y=row - body + 1, animate=False)
        if moved:
            self.post_message(self.Highlighted(self.cursor_key))
        self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        self._width = self.scrollable_content_region.width  # once a frame, not once a line
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = self._width
        x = int(self.scroll_x)
        styles = self._styles()
        if y == 0:
            labels = tuple(label for label, _ in COLUMNS)
            return self._fitted(self._line(labels, styles["header"], styles), x, width)
        row = int(self.scroll_y) + y - 1
        if row >= len(self._order):
            return Strip.blank(width, styles["base"])
        key = self._order[row]
        texts = self._shown[key]
        # What the line is drawn from: a look-up while none of it changed.
        look = (texts, row == self.cursor_row, row % 2, x, width, id(styles))
        cached = self._cache.get(key)
        if cached is None or cached[0] != look:
            heading = key.startswith(HEADING)
            base = styles["base"] if row % 2 else styles["even"]
            if row == self.cursor_row:
                base += styles["cursor"]
            if heading:
                base += styles["heading"]
            line = self._line(texts, base, styles, heading)
            cached = self._cache[key] = (look, self._fitted(line, x, width))
        return cached[1]

    def _styles(self) -> dict[str, Style]:
        """The component styles, looked up once per theme and focus (a look-up walks
        the CSS: it was most of a line's cost)."""
        now = (self.app.theme, self.has_focus)
        if self._looks[0] != now:
            part = self.get_component_rich_style
            base = self.rich_style
            self._looks = (now, {
                "base": base,
                "even": base + part("fleet-table--even"),
                "cursor": part("fleet-table--cursor"),
                "header": part("fleet-table--header"),
                "heading": part("fleet-table--heading", partial=True),
                **{tone: Style.parse(spec) for tone, spec in TONES.items()},
            })  # fmt: skip
        return self._looks[1]

    def _line(
        self, texts: tuple[str, ...], base: Style, styles: dict[str, Style], heading: bool = False
    ) -> Strip:
        segments = []
        for col, text in enumerate(texts):
            style = base
            if col == STATE_COLUMN and text and not heading:
                style += styles[SYMBOL_TONES.get(text[0], "pending")]
            elif col == 0:
                style += BOLD
            segments.append(Segment(_fit(col, text), style))
        return Strip(segments, sum(WIDTHS))

    def _fitted(self, line: Strip, x: int, width: int) -> Strip:
        """The fixed columns, then the rest from the horizontal scroll on."""
        if width <= FIXED_WIDTH:
            return line.crop(0, width)
        if x == 0:
            return line.crop_extend(0, width, self._styles()["base"])
        rest = line.crop(FIXED_WIDTH + x, x + width)
        joined = Strip.join([line.crop(0, FIXED_WIDTH), rest])
        return joined.extend_cell_length(width, self._styles()["base"])

    def on_resize(self) -> None:
        self._cursor_to(self.cursor_row)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def action_move(self, step: int) -> None:
        self._cursor_to(self.cursor_row + step)

    def action_page(self, step: int) -> None:
        self._cursor_to(self.cursor_row + step * max(1, self.scrollable_content_region.height - 1))

    def action_select(self) -> None:
        if self.cursor_key is not None:
            self.post_message(self.Selected(self.cursor_key))

    def on_click(self, event: events.Click) -> None:
        row = int(self.scroll_y) + event.y - 1
        if event.y < 1 or row >= len(self._order):
            return
        if row == self.cursor_row:
            self.action_select()
        else:
            self._cursor_to(row)
