"""~/.config/sgwatch/config.toml: validated settings. Everything works without the file.

Errors name the file, the key and what was expected; an unknown key is an
error, never silently ignored (a typo would otherwise look like a setting).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Literal

from platformdirs.unix import Unix
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sgwatch.core.cmdline import parse_shell
from sgwatch.core.podaddress import parse_address

# The dashboard bindings `[keys]` can move, by the id each has in ui/app.py.
KEY_ACTIONS = (
    "search",
    "next",
    "previous",
    "follow",
    "level",
    "rank",
    "crash",
    "layout",
    "maximize",
    "gpus",
    "flags",
    "bench",
    "experiments",
    "launch",
    "help",
    "quit",
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Notifications(_Strict):
    bell: bool = True  # ring the terminal bell on ready and crash
    toast: bool = True  # show a notification on ready and crash


class HostProfile(_Strict):
    log: str | None = None  # log path on the host, when discovery cannot find it
    launch: str | None = None  # command to start a server when none is running
    # The host is pods: k8s://[CONTEXT/]NAMESPACE[/WORKLOAD], reached with kubectl
    kubernetes: str | None = None
    gpu_bandwidth_gbps: Annotated[float, Field(gt=0)] | None = None  # per GPU, GB/s
    bench_prompts: list[str] | None = None
    notifications: Notifications | None = None  # overrides the global setting

    @field_validator("launch")
    @classmethod
    def _one_simple_command(cls, text: str | None) -> str | None:
        if text is not None:
            parse_shell(text)  # a LaunchError says why not, under the key's name
        return text

    @field_validator("kubernetes")
    @classmethod
    def _pod_address(cls, text: str | None) -> str | None:
        if text is not None:
            parse_address(text)  # a ValueError says why not, under the key's name
        return text


class Config(_Strict):
    theme: str | None = None  # any bundled or built-in Textual theme name
    notifications: Notifications = Notifications()
    keys: dict[Literal[KEY_ACTIONS], str] = {}  # action -> key(s): {"search": "ctrl+f"}
    hosts: dict[str, HostProfile] = {}  # by ssh alias
    groups: dict[str, list[str]] = {}  # name -> host aliases, for `sgwatch @name`

    def host(self, alias: str) -> HostProfile:
        return self.hosts.get(alias, HostProfile())


class ConfigError(Exception):
    """One line per problem, each naming the file and the key."""


def default_path() -> Path:
    # The XDG layout on every platform (macOS too): $XDG_CONFIG_HOME, else ~/.config
    return Unix("sgwatch").user_config_path / "config.toml"


def load_config_arg(arg: str | None) -> Config:
    """The config a `--config FILE` argument names (None: the default place)."""
    return load_config(None if arg is None else Path(arg).expanduser())


def load_config(path: Path | None = None) -> Config:
    """The config at `path` (or the default place); defaults when the default file is absent."""
    explicit = path is not None
    path = path or default_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"{path}: no such file") from None
        return Config()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    try:
        return Config.model_validate(data)
    except ValidationError as e:
        raise ConfigError("\n".join(_describe(path, err) for err in e.errors())) from None


def _describe(path: Path, err: dict) -> str:
    key = ".".join(str(part) for part in err["loc"])
    if err["loc"][0] == "keys" and err["loc"][-1] == "[key]":
        actions = ", ".join(KEY_ACTIONS)
        return f"{path}: `{key[: -len('.[key]')]}`: no such action (choose one of: {actions})"
    if err["type"] == "value_error":  # a validator's own words say what is wrong
        return f"{path}: `{key}`: {err['ctx']['error']}"
    if err["type"] == "extra_forbidden":
        return f"{path}: unknown key `{key}` (see the README for the keys sgwatch reads)"
    got = err.get("input")
    return f"{path}: `{key}`: {err['msg'].lower()} (got {got!r})"
