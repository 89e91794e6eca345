"""PromQL label matchers (`job=~"vllm.*"`), tested on a scrape target's labels as
Prometheus tests them on a series: a regex must match the whole value, and a label the
target lacks reads as the empty string.

    ours = matcher(['job="vllm"', 'env!~"dev|test"'])   # parsed once
    ours({"job": "vllm", "instance": "a:8000"})          # True
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence

from sgwatch.config import MATCHER

Labels = Mapping[str, str]


def _text(quoted: str) -> str:
    """The string's value: PromQL's double-quoted strings escape as JSON's do."""
    try:
        return json.loads(f'"{quoted}"')
    except ValueError:
        return quoted


def _one(text: str) -> Callable[[Labels], bool]:
    found = MATCHER.fullmatch(text)
    if found is None:
        return lambda _labels: False
    name, op, value = found.group(1), found.group(2), _text(found.group(3))
    if op in ("=", "!="):
        return lambda labels: (labels.get(name, "") == value) == (op == "=")
    try:
        pattern = re.compile(value)
    except re.error:  # a regex that does not compile matches nothing
        return lambda _labels: False
    return lambda labels: (pattern.fullmatch(labels.get(name, "")) is not None) == (op == "=~")


def matcher(matchers: Sequence[str]) -> Callable[[Labels], bool]:
    """Whether labels satisfy every matcher (a matcher of another shape: no), parsed once."""
    tests = [_one(m) for m in matchers]
    return lambda labels: all(test(labels) for test in tests)
