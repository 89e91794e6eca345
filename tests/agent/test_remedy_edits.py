"""A crash's remedy, as the engine reads it from the server's message, becomes the
edits `restart` takes (no host needed)."""

from __future__ import annotations

from sgwatch.agent.status import remedy_edits


def test_a_remedy_becomes_restart_edits():
    edits = remedy_edits([["--disable-piecewise-cuda-graph"], ["--mem-fraction-static", "0.7"]],
                         ["--enforce-piecewise-cuda-graph"])  # fmt: skip
    assert edits == {
        "unset": ["enforce-piecewise-cuda-graph"],
        "enable": ["disable-piecewise-cuda-graph"],
        "set": {"mem-fraction-static": "0.7"},
    }
    assert remedy_edits([], []) == {}
