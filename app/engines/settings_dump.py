"""The settings an engine logs at startup as a Python repr, as a dict.

Two forms: a call repr, `ServerArgs(model_path='m', tp_size=2, ...)` (SGLang 0.4.x's
dataclass) or `Namespace(model='m', ...)` (vLLM V0's argparse namespace), and a dict
repr, `{'model_path': 'm', 'tp_size': 2, ...}` (newer SGLang, vLLM's non-default args).
Values are Python literals; one that is not (an object repr) is kept as its
source text. A dump cut short (a pasted excerpt) yields the items before the cut.
"""

from __future__ import annotations

import ast
import re
import threading
from typing import Any

# CPython 3.11 keeps the AST builder's recursion count per interpreter, so two
# threads parsing at once can fail with "AST constructor recursion depth
# mismatch" (a SystemError); logs may be read on several threads.
_AST_LOCK = threading.Lock()


_CALL = re.compile(r"[A-Za-z_]\w*\(")


def parse_settings(dump: str) -> dict[str, Any]:
    text = dump.strip()
    if _CALL.match(text):
        node = _parse_prefix(text, ")")
        if not isinstance(node, ast.Call):
            return {}
        return {kw.arg: _value(kw.value) for kw in node.keywords if kw.arg}
    if text.startswith("{"):
        node = _parse_prefix(text, "}")
        if not isinstance(node, ast.Dict):
            return {}
        return {
            k.value: _value(v)
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        }
    return {}


def _parse_prefix(text: str, close: str) -> ast.expr | None:
    """Parse `text`; if it was cut short, drop items from the end until it parses."""
    body = text
    while True:
        try:
            with _AST_LOCK:
                return ast.parse(body, mode="eval").body
        except SyntaxError:
            cut = body.rfind(",", 0, len(body) - 1)
            if cut < 0:
                return None
            body = body[:cut] + close


def _value(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant):  # most values; literal_eval leaves a cycle per call
        return node.value
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)
