"""Label matchers tested on a target's labels as Prometheus tests them on a series."""

from __future__ import annotations

import pytest

from sgwatch.fleet.matchers import matcher

LABELS = {"job": "vllm-prod", "instance": "127.0.0.7:8000", "env": "prod"}


@pytest.mark.parametrize(
    ("matchers", "expected"),
    [
        ([], True),
        (['job="vllm-prod"'], True),
        (['job="vllm"'], False),
        (['job != "vllm"'], True),
        (['job=~"vllm.*"'], True),
        (['job=~"vllm"'], False),  # anchored at both ends
        (['job!~"vllm-.*"'], False),
        (['team=""'], True),  # a label the target lacks reads as empty
        (['team=~".+"'], False),
        (['job=~"vllm.*"', 'env="dev"'], False),  # every matcher must hold
        (['instance=~"127\\\\.0\\\\..*"'], True),  # PromQL escapes, as in the config
        (['job=~"("'], False),  # a regex that does not compile matches nothing
    ],
)
def test_matchers_on_target_labels(matchers, expected):
    assert matcher(matchers)(LABELS) is expected
