"""Bytes from a log stream -> text lines a parser and a screen can trust.

- `\\n` and `\\r` both end a fragment: tqdm redraws its bar with `\\r` and writes
  `\\n` only when the bar closes, so a redirected log holds one physical line
  with hundreds of bar states. `\\r\\n` counts once.
- Another process's timestamped record glued onto an unfinished bar is split
  off into its own line.
- Invalid UTF-8 is replaced, never fatal; a multi-byte character split across
  two reads is decoded whole.
- A line longer than `max_line` is cut (with a marker) without losing the
  lines after it; memory stays bounded while an endless line streams in.
- Terminal control sequences and control characters are removed: log text is
  untrusted and must not drive the user's terminal.
"""

from __future__ import annotations

import codecs
import re

MAX_LINE = 64 * 1024

# CSI, OSC (terminated by BEL or ST), and two-byte ESC sequences.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\r\n]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
# C0 controls except \t \n \r, DEL, C1 controls, and a lone ESC left over.
_CONTROLS = dict.fromkeys([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0)])
# Bytes that never need sanitising: \t \n \r, printable ASCII, and UTF-8 bytes
# except 0xC2, the lead byte of the C1 controls U+0080-U+009F (and a few letters).
_SAFE_BYTES = bytes([9, 10, 13, *range(0x20, 0x7F), *range(0x80, 0xC2), *range(0xC3, 0x100)])
# A record that starts mid-line: SGLang's `[2025-01-01 10:00:00 TP1] ` prefix
# (optional ms and rank tags) anywhere after other text, or Python logging's
# `2025-01-01 10:00:00,123 - ` right after a tqdm frame's closing `]`.
_GLUED_BRACKET = re.compile(
    r"\[(?<=[^\n\r]\[)(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?(?: [A-Z_]+\d+)*\] )"
)
_GLUED_LOGGING = re.compile(r"\](?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - )")


def sanitize(text: str) -> str:
    """Remove terminal escape sequences and control characters (tabs stay)."""
    if "\x1b" in text:
        text = _ESCAPES.sub("", text)
    return text.translate(_CONTROLS)


class LineSplitter:
    """Incremental splitter: `feed(chunk)` returns the lines completed so far."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""  # raw text of the unfinished line
        self._dropped = 0  # chars of the unfinished line cut so far
        self._unsafe = False  # the text not yet split may hold control characters

    def feed(self, chunk: bytes) -> list[str]:
        # A C-speed byte scan decides whether the (slow) sanitiser must run.
        unsafe = bool(chunk.translate(None, _SAFE_BYTES))
        lines = self._take(self._pending + self._decoder.decode(chunk), unsafe, final=False)
        self._unsafe = (unsafe or self._unsafe) and bool(self._pending)
        return lines

    def idle(self) -> bool:
        """Nothing held back: what was fed ended with a whole line (and character)."""
        return not self._pending and not self._decoder.getstate()[0]

    def flush(self) -> list[str]:
        """End of stream: the unfinished last line (if any) is a line too."""
        text = self._pending + self._decoder.decode(b"", final=True)
        return self._take(text, False, final=True)

    def _take(self, text: str, unsafe: bool, final: bool) -> list[str]:
        if final:
            complete, self._pending = text, ""
        else:
            cut = max(text.rfind("\n"), text.rfind("\r"))
            # A trailing \r may be the first half of \r\n: wait for the next read.
            if cut >= 0 and cut == len(text) - 1 and text[cut] == "\r":
                cut = max(text.rfind("\n", 0, cut), text.rfind("\r", 0, cut))
            complete, self._pending = text[: cut + 1], text[cut + 1 :]
        # Lines first: a cut count so far belongs to the first of them (the line
        # that was pending); only then may the new pending line start its own.
        lines = self._lines(complete, unsafe or self._unsafe) if complete else []
        if len(self._pending) > self.max_line:
            self._dropped += len(self._pending) - self.max_line
            self._pending = self._pending[: self.max_line]
        return lines

    def _lines(self, text: str, unsafe: bool) -> list[str]:
        # Whole-block operations first (C speed); per-line work only where needed.
        if unsafe:
            text = sanitize(text)
        if _GLUED_BRACKET.search(text):
            text = _GLUED_BRACKET.sub("\n[", text)
        if _GLUED_LOGGING.search(text):
            text = _GLUED_LOGGING.sub("]\n", text)
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()  # nothing follows the last newline
        if "\r" in text:
            lines = _frames(lines)
        if self._dropped or (
            lines
            and _may_hold_long_line(text, self.max_line)
            and max(map(len, lines)) > self.max_line
        ):
            self._cut_long(lines)
        return lines

    def _cut_long(self, lines: list[str]) -> None:
        cut, self._dropped = self._dropped, 0  # chars already cut from the first line
        for i, line in enumerate(lines):
            if cut or len(line) > self.max_line:
                cut += max(0, len(line) - self.max_line)
                lines[i] = f"{line[: self.max_line]} …[{cut} chars cut]"
                cut = 0


def _may_hold_long_line(text: str, cap: int) -> bool:
    """False when no line of text can be longer than cap: every aligned window
    of cap // 2 characters holds a line break (a longer line would contain one
    such window whole). A few memchr scans instead of measuring every line."""
    half = max(cap // 2, 1)
    return any(text.find("\n", i, i + half) < 0 for i in range(0, len(text), half))


def _frames(lines: list[str]) -> list[str]:
    """tqdm frames: every \r ends one; the empty ones are redraw artefacts."""
    out: list[str] = []
    for line in lines:
        if "\r" in line:
            out.extend(frame for frame in line.split("\r") if frame)
        else:
            out.append(line)
    return out
