"""What the fleet source makes of answers that are not the query API's: a tiny local
HTTP server answers each request with a body the test chose."""

from __future__ import annotations

import json

import pytest

from sgwatch.config import BasicAuth, Fleet
from sgwatch.fleet.auth import AuthError
from sgwatch.fleet.prometheus import PrometheusSource
from tests.fleet.fakeapi import EMPTY, HTML


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ((200, "text/html", HTML), "text/html, not the query API's JSON"),
        ((404, "text/html", HTML), "HTTP 404, text/html"),
        ((200, "application/json", '{"hello": 1}'), "JSON not of the query API's shape"),
        (
            (
                400,
                "application/json",
                json.dumps(
                    {"status": "error", "errorType": "bad_data", "error": "parse error:\nat char 5"}
                ),
            ),
            "bad_data: parse error: at char 5",
        ),
        (
            (
                200,
                "application/json",
                json.dumps({"status": "success", "data": {"resultType": "matrix", "result": []}}),
            ),
            "not an instant vector",
        ),
        ((503, "text/plain", "busy"), "HTTP 503"),
    ],
)
async def test_garbage_is_one_line_and_stale(fake, answer, says):
    fake.answer = answer
    src = PrometheusSource.open("t", Fleet(prometheus=fake.url, timeout_s=1.0))
    try:
        snap = await src.snapshot()
    finally:
        await src.close()
    assert snap.stale and snap.rows == ()
    assert says in snap.problem and "\n" not in snap.problem
    assert snap.problem.startswith(fake.url)


async def test_warnings_of_a_partial_answer_are_kept(fake):
    fake.answer = (
        200,
        "application/json",
        json.dumps({**EMPTY, "warnings": ["partial\nresponse: store down"]}),
    )
    src = PrometheusSource.for_url(fake.url)
    try:
        snap = await src.snapshot()
    finally:
        await src.close()
    assert not snap.stale and snap.warnings == ("partial response: store down",)


async def test_a_bearer_token_is_sent_and_never_shown(fake, tmp_path, monkeypatch):
    token = tmp_path / "token"
    token.write_text("s3cr3t-token\n")
    src = PrometheusSource.open("prod", Fleet(prometheus=fake.url, bearer_token_file=str(token)))
    fake.answer = (200, "text/html", HTML)
    try:
        snap = await src.snapshot()
    finally:
        await src.close()
    assert fake.headers[0]["Authorization"] == "Bearer s3cr3t-token"
    assert "s3cr3t" not in snap.problem and "s3cr3t" not in repr(src.api.__dict__)


def test_a_missing_secret_names_where_it_was_looked_for(tmp_path, monkeypatch):
    monkeypatch.delenv("PROM_PW", raising=False)
    fleet = Fleet(
        prometheus="https://p:9090", basic_auth=BasicAuth(username="u", password_env="PROM_PW")
    )
    with pytest.raises(AuthError, match="basic-auth password variable PROM_PW is not set"):
        PrometheusSource.open("prod", fleet)
    missing = tmp_path / "nope"
    with pytest.raises(AuthError, match=f"bearer token file {missing}: No such file"):
        PrometheusSource.open(
            "prod", Fleet(prometheus="https://p:9090", bearer_token_file=str(missing))
        )
