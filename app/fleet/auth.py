"""A fleet's credentials, read when it opens: a bearer token or a basic-auth password,
from a file or an environment variable. The secret itself is never in a message:
an error names the file or the variable, never what it holds."""

from __future__ import annotations

import os
from pathlib import Path

import httpx

from sgwatch.config import Fleet


class AuthError(Exception):
    """One line naming where the secret should have come from."""


def headers_and_auth(fleet: Fleet) -> tuple[dict[str, str], httpx.Auth | None]:
    if fleet.bearer_token_file or fleet.bearer_token_env:
        token = _secret(fleet.bearer_token_file, fleet.bearer_token_env, "bearer token")
        return {"Authorization": f"Bearer {token}"}, None
    if fleet.basic_auth is not None:
        b = fleet.basic_auth
        password = _secret(b.password_file, b.password_env, "basic-auth password")
        return {}, httpx.BasicAuth(b.username, password)
    return {}, None


def _secret(file: str | None, env: str | None, what: str) -> str:
    if file is not None:
        path = Path(file).expanduser()
        try:
            text = path.read_text(encoding="utf-8").strip()
        except OSError as e:
            raise AuthError(f"the {what} file {path}: {e.strerror or type(e).__name__}") from None
        if not text:
            raise AuthError(f"the {what} file {path} is empty")
        return text
    value = os.environ.get(env or "", "").strip()
    if not value:
        raise AuthError(f"the {what} variable {env} is not set")
    return value
