"""Flag edits by name (a flag without its dashes), as `sgwatch restart` and the MCP
server's `restart` take them: each checked against the server's flag catalog."""

from __future__ import annotations

from collections.abc import Iterable

from sgwatch.control import flagedit
from sgwatch.core.cmdline import LaunchCommand, LaunchError
from sgwatch.engines import Catalog, FlagOption


def apply_edits(
    cmd: LaunchCommand,
    catalog: Catalog,
    *,
    enable: Iterable[str] = (),
    disable: Iterable[str] = (),
    set_values: Iterable[str] = (),
    unset: Iterable[str] = (),
) -> LaunchCommand:
    """The command with the edits made (unset, disable, enable, then NAME=VALUE sets).
    Raises LaunchError, in one line, for a flag the catalog does not know or misuse."""
    for name in unset:
        cmd = flagedit.remove(cmd, option(name, catalog), catalog)
    for name in disable:
        opt = option(name, catalog)
        if opt.takes_value:
            raise LaunchError(f"--{name} takes a value: use --unset {name}")
        cmd = flagedit.toggle(cmd, opt, catalog) if flagedit.is_on(cmd, opt, catalog) else cmd
    for name in enable:
        opt = option(name, catalog)
        if opt.takes_value:
            raise LaunchError(f"--{name} takes a value: use --set {name}=VALUE")
        cmd = cmd if flagedit.is_on(cmd, opt, catalog) else flagedit.toggle(cmd, opt, catalog)
    for item in set_values:
        name, eq, value = item.partition("=")
        if not eq:
            raise LaunchError(f"--set {item}: write NAME=VALUE")
        cmd = flagedit.edit(cmd, option(name, catalog), value, catalog)
    return cmd


def option(name: str, catalog: Catalog) -> FlagOption:
    """The catalog's flag for `name` (with or without its dashes)."""
    found = catalog.lookup("--" + name.removeprefix("--"))
    if found.status == "ambiguous":
        raise LaunchError(f"--{name} is ambiguous: {', '.join(found.candidates)}")
    if found.option is None:
        who = f"{catalog.engine_label} {catalog.version or ''}".rstrip()
        raise LaunchError(f"--{name} is not a flag of {who}")
    return found.option
