"""The host's live flag catalog, kept per host, interpreter and SGLang version.

Building SGLang's parser on the host imports torch (seconds); its answer changes
only when the installed SGLang does, so it is kept in
`$XDG_CACHE_HOME/sgwatch/catalogs/` (default `~/.cache`) under a name made of the
three, and asked again when any of them changes.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from platformdirs.unix import Unix

_UNSAFE = re.compile(r"[^A-Za-z0-9._@-]")


def folder() -> Path:
    return Unix("sgwatch").user_cache_path / "catalogs"  # $XDG_CACHE_HOME, else ~/.cache


def _path(host: str, interpreter: str, version: str) -> Path:
    digest = hashlib.sha256(interpreter.encode()).hexdigest()[:12]
    return folder() / _UNSAFE.sub("_", f"{host}-{digest}-{version}.json")


def load(host: str, interpreter: str, version: str | None) -> str | None:
    if not version:
        return None  # an unknown version could be anything: ask
    try:
        return _path(host, interpreter, version).read_text(encoding="utf-8")
    except OSError:
        return None


def save(host: str, interpreter: str, version: str | None, output: str) -> None:
    if not version:
        return
    path = _path(host, interpreter, version)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(output, encoding="utf-8")
        tmp.replace(path)  # whole or not at all: another sgwatch may read it now
    except OSError:
        pass  # a cache that cannot be written only costs the next start a few seconds
