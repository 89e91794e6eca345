"""PromQL label matchers (`job=~"vllm.*"`), tested on a scrape target's labels as
Prometheus tests them on a series: a regex must match the whole value, and a label the
target lacks reads as the empty string.

    matches(['job="vllm"', 'env!~"dev|test"'], {"job": "vllm", "instance": "a:8000"})  # True
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

# The config accepts only this shape (config.py checks it): name, operator, a string.
_MATCHER = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*')


def _text(quoted: str) -> str:
    """The string's value: PromQL's double-quoted strings escape as JSON's do."""
    try:
        return json.loads(f'"{quoted}"')
    except ValueError:
        return quoted


def matches(matchers: Sequence[str], labels: Mapping[str, str]) -> bool:
    """Whether `labels` satisfy every matcher (a matcher of another shape: no)."""
    for m in matchers:
        found = _MATCHER.fullmatch(m)
        if found is None:
            return False
        name, op, value = found.group(1), found.group(2), _text(found.group(3))
        have = labels.get(name, "")
        if op == "=":
            ok = have == value
        elif op == "!=":
            ok = have != value
        else:
            try:
                ok = re.fullmatch(value, have) is not None
            except re.error:
                return False
            ok = ok if op == "=~" else not ok
        if not ok:
            return False
    return True
