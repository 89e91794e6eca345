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
# A record that starts mid-line: SGLang's `[2025-01-01 10:00:00 TP1] ` prefix
# (optional ms and rank tags) or Python logging's `2025-01-01 10:00:00,123 - `.
_GLUED = re.compile(
    r"(?<=.)(?=\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?(?: [A-Z_]+\d+)*\] "
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - )"
)


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

    def feed(self, chunk: bytes) -> list[str]:
        return self._take(self._pending + self._decoder.decode(chunk), final=False)

    def flush(self) -> list[str]:
        """End of stream: the unfinished last line (if any) is a line too."""
        text = self._pending + self._decoder.decode(b"", final=True)
        return self._take(text, final=True)

    def _take(self, text: str, final: bool) -> list[str]:
        if final:
            complete, self._pending = text, ""
        else:
            cut = max(text.rfind("\n"), text.rfind("\r"))
            # A trailing \r may be the first half of \r\n: wait for the next read.
            if cut >= 0 and cut == len(text) - 1 and text[cut] == "\r":
                cut = max(text.rfind("\n", 0, cut), text.rfind("\r", 0, cut))
            complete, self._pending = text[: cut + 1], text[cut + 1 :]
            if len(self._pending) > self.max_line:
                self._dropped += len(self._pending) - self.max_line
                self._pending = self._pending[: self.max_line]
        if not complete:
            return []
        lines: list[str] = []
        parts = sanitize(complete).split("\n")
        if parts[-1] == "":
            parts.pop()  # nothing follows the last newline
        for part in parts:
            if "\r" in part:
                # tqdm frames: every \r ends one; the empty ones are redraw artefacts.
                lines.extend(frame for frame in part.split("\r") if frame)
            else:
                lines.append(part)
        out: list[str] = []
        cut, self._dropped = self._dropped, 0  # chars already cut from the first line
        for line in lines:
            if cut or len(line) > self.max_line:
                cut += max(0, len(line) - self.max_line)
                line = f"{line[: self.max_line]} …[{cut} chars cut]"
                cut = 0
            if line.find("[20", 1) != -1 or " - " in line:
                out.extend(_GLUED.split(line))
            else:
                out.append(line)
        return out
