"""The byte budget and the cleaning every answer goes through (no host needed)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from sgwatch.agent.budget import ANSWER_BYTES, answer, clean
from sgwatch.agent.waiting import message, worth_telling

docs = st.recursive(
    st.none() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=600),
    lambda inner: st.lists(inner, max_size=40) | st.dictionaries(st.text(max_size=20), inner),
    max_leaves=30,
)


@settings(deadline=None, max_examples=30)
@given(st.dictionaries(st.text(max_size=30), docs, max_size=12))
def test_any_answer_is_json_within_the_budget(doc):
    text = answer(doc)
    assert len(text.encode()) <= ANSWER_BYTES
    json.loads(text)


def test_a_long_list_keeps_its_newest_items_and_says_it_was_cut():
    doc = json.loads(answer({"host": "h", "lines": [f"line {i} " * 10 for i in range(100)]}))
    assert doc["cut"] is True and doc["host"] == "h"
    assert doc["lines"][-1].startswith("line 99 ") and len(doc["lines"]) < 100


def test_clean_removes_escapes_and_masks_secrets_but_not_token_counts():
    assert clean("\x1b[1;31mCRASHED\x1b[0m\x07 done") == "CRASHED done"
    assert clean("HF_TOKEN=hf_abcdefgh123 --api-key sk-12345678 ok") == (
        "HF_TOKEN=*** --api-key *** ok"
    )
    assert clean("api_key='abc123', x=1") == "api_key=***, x=1"
    decode = "Decode batch, #running-req: 1, #token: 512, token usage: 0.01"
    assert clean(decode) == decode
    assert clean("x" * 300) == "x" * 199 + "…"


def _progress(done: int, total: int) -> dict:
    return {"event": "progress", "host": "h", "time": "2026-01-01T00:00:00.000+00:00",
            "kind": "decode", "done": done, "total": total, "current": None, "rate": None,
            "eta_s": None}  # fmt: skip


def test_progress_is_told_every_n_steps_and_at_the_last():
    told = [n for n in range(1, 53) if worth_telling(_progress(n, 52), 10)]
    assert told == [10, 20, 30, 40, 50, 52]
    assert message(_progress(20, 52)) == "decode 20/52"
