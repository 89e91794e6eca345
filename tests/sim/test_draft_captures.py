"""Draft-model captures are labelled as the draft's in every log format the simulator
writes: where no begin line names them (0.4, 0.5: only their bars), the draft model's
weights loading between them and the target's capture does."""

import pytest

NEXTN = ("--model-path", "Qwen/Qwen3.6-27B", "--tp", "2", "--speculative-algorithm", "NEXTN")


@pytest.mark.parametrize(("fmt", "target"), [("0.4", "decode"), ("0.5", "decode"),
                                              ("0.5.23", "verify")])  # fmt: skip
def test_draft_captures_are_labelled_draft(launch, fmt, target):
    sim = launch(*NEXTN, "--sim-format", fmt, "--sim-speed", "200")
    sim.wait_ready()
    kinds = [c.kind for c in sim.summary().graph_captures]
    assert kinds == [target, "draft", "draft_extend"]
