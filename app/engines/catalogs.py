"""Bundled flag catalogs of an engine, and the choice between the host's live one and these.

Each engine ships catalogs as `ENGINE-VERSION.json` beside its catalog package,
generated from that release's parser. They stand in when the host's own parser
cannot be asked; how near a bundled release must be is the engine's own rule.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from importlib.resources import files

from packaging.version import InvalidVersion, Version

from sgwatch.engines.shapes.flags import Catalog, Selection


def version_key(version: str) -> Version:
    """Orders release strings as pip does: 0.5.10 > 0.5.9, 0.4.6.post2 > 0.4.6 > 0.4.6.dev0;
    one that is no release at all sorts first."""
    try:
        return Version(version.strip())
    except InvalidVersion:
        return Version("0")


def release_part(version: Version, i: int) -> int:
    """Part `i` of the release (0: major, 1: minor, 2: patch), 0 where it is not written."""
    return version.release[i] if i < len(version.release) else 0


class Bundled:
    """The catalogs `ENGINE-VERSION.json` in `package`, each read once; `label` is how
    messages name the engine ("SGLang")."""

    def __init__(self, engine: str, package: str, label: str) -> None:
        self.engine, self.label = engine, label
        pattern = re.compile(rf"{re.escape(engine)}-(.+)\.json")

        @functools.cache
        def versions() -> tuple[str, ...]:
            found = (
                m.group(1) for p in files(package).iterdir() if (m := pattern.fullmatch(p.name))
            )
            return tuple(sorted(found, key=version_key))

        @functools.cache
        def load(version: str) -> Catalog:
            text = files(package).joinpath(f"{engine}-{version}.json").read_text()
            return Catalog.from_json(text).model_copy(update={"label": label})

        self.versions = versions
        self.load = load

    def all(self) -> tuple[Catalog, ...]:
        return tuple(self.load(v) for v in self.versions())


def select(
    bundled: Bundled,
    live_output: str | None,
    server_version: str | None,
    nearest: Callable[[str | None], Catalog],
) -> Selection:
    """The live catalog when the host's parser answered, else the nearest bundled one.

    `live_output` is what the engine's host_catalog.py printed (None if it could not
    run); `server_version` is the version discovery or the log reported.
    """
    engine = bundled.engine
    reason = "the host's parser was not asked"
    if live_output is not None:
        try:
            data = json.loads(_last_json_line(live_output))
            if "error" in data:
                reason = f"the host's parser failed: {data['error']}"
            else:
                live = Catalog.model_validate({**data, "label": bundled.label})
                if live.options:
                    where = f"{engine} {live.version}" if live.version else engine
                    python = f", Python {live.python}" if live.python else ""
                    return Selection(live, "live", f"live from the host's parser ({where}{python})")
                reason = "the host's parser listed no options"
        except ValueError as e:  # JSON or validation
            reason = f"the host's answer was unreadable: {str(e).splitlines()[0]}"
    cat = nearest(server_version)
    asked = f"nearest to {server_version}" if server_version else "version unknown"
    return Selection(cat, "bundled", f"bundled {engine} {cat.version} ({asked}); {reason}")


def _last_json_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.startswith("{")]
    if not lines:
        raise ValueError("no JSON object in the output")
    return lines[-1]
