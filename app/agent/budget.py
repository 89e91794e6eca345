"""Every tool answers in compact JSON within a byte budget: an agent reads a few hundred
bytes, never a screenful. Text from the host is made safe to show first: no terminal
escapes or control characters, and values that look like secrets masked."""

from __future__ import annotations

import json
import re
from typing import Any

from sgwatch.core.cmdline import MASK

# The most one answer may hold, in bytes of JSON; `log` reads lines and gets more.
ANSWER_BYTES = 1024
LOG_BYTES = 2048
TEXT_CHARS = 200  # one string: a log line, a crash summary, a command

_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# NAME=value and --flag value pairs whose name says secret (HF_TOKEN, --api-key; not
# the `#token: 512` of a decode line), and tokens by their prefix.
_SECRET_PAIR = re.compile(
    r"(?i)\b([\w-]*[_-](?:token|key)|[\w-]*(?:secret|password|passwd)[\w-]*)(\s*[=:]\s*|\s+)"
    r"(?!\*\*\*)(['\"]?)[^\s'\",]+\3"
)
_SECRET_WORD = re.compile(r"\b(?:hf_|sk-|ghp_|xox[bp]-)[A-Za-z0-9_-]{6,}")


def clean(text: str, limit: int = TEXT_CHARS) -> str:
    """`text` as safe to hand an agent: escapes and control characters gone, secrets
    masked, at most `limit` characters (an ellipsis says it was cut)."""
    text = _CONTROL.sub("", _ESCAPE.sub("", text.replace("\t", " ")))
    text = _SECRET_PAIR.sub(lambda m: f"{m[1]}{m[2]}{MASK}", text)
    text = _SECRET_WORD.sub(MASK, text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dump(doc: Any) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False, default=str)


def answer(doc: dict[str, Any], limit: int = ANSWER_BYTES) -> str:
    """`doc` as compact JSON of at most `limit` bytes: the biggest part shrinks (a list
    loses its oldest quarter, a string its last third) until it fits; `"cut": true`
    says so."""
    text = dump(doc)
    while len(text.encode()) > limit:
        doc = dict(doc, cut=True)
        if not _shrink(doc):
            return dump({"cut": True, "error": "the answer did not fit its budget"})
        text = dump(doc)
    return text


def _shrink(doc: dict[str, Any]) -> bool:
    """Make the biggest part of `doc` smaller, in place; False when nothing can shrink."""
    parts = [(k, v) for k, v in doc.items() if isinstance(v, list | str | dict)]
    if not parts:
        return False
    key, value = max(parts, key=lambda kv: len(dump(kv[1])))
    if isinstance(value, list) and value:
        doc[key] = value[max(1, len(value) // 4) :] if len(value) > 1 else [_smaller(value[0])]
        return doc[key] != value
    if isinstance(value, dict) and value:
        inner = dict(value)
        if _shrink(inner):
            doc[key] = inner
            return True
        doc.pop(key)
        return True
    if isinstance(value, str) and len(value) > 40:
        doc[key] = value[: len(value) * 2 // 3] + "…"
        return True
    doc.pop(key)
    return True


def _smaller(item: Any) -> Any:
    if isinstance(item, str) and len(item) > 40:
        return item[: len(item) * 2 // 3] + "…"
    if isinstance(item, dict):
        inner = dict(item)
        return inner if _shrink(inner) else None
    return None
