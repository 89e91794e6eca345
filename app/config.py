"""~/.config/sgwatch/config.toml: validated settings. Everything works without the file.

Errors name the file, the key and what was expected; an unknown key is an
error, never silently ignored (a typo would otherwise look like a setting).
"""

from __future__ import annotations

import re
import string
import tomllib
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from platformdirs.unix import Unix
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from sgwatch.core.cmdline import parse_shell
from sgwatch.core.podaddress import check_selector, parse_address

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
    "probe_advice",
    "help",
    "quit",
)


def _pod_address(text: str) -> str:
    parse_address(text)  # a ValueError says why not, under the key's name
    return text


PodAddressText = Annotated[str, AfterValidator(_pod_address)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Notifications(_Strict):
    bell: bool = True  # ring the terminal bell on ready and crash
    toast: bool = True  # show a notification on ready and crash


class HostProfile(_Strict):
    log: str | None = None  # log path on the host, when discovery cannot find it
    launch: str | None = None  # command to start a server when none is running
    # The host is pods: k8s://[CONTEXT/]NAMESPACE[/WORKLOAD], reached with kubectl
    kubernetes: PodAddressText | None = None
    gpu_bandwidth_gbps: Annotated[float, Field(gt=0)] | None = None  # per GPU, GB/s
    bench_prompts: list[str] | None = None
    notifications: Notifications | None = None  # overrides the global setting

    @field_validator("launch")
    @classmethod
    def _one_simple_command(cls, text: str | None) -> str | None:
        if text is not None:
            parse_shell(text)  # a LaunchError says why not, under the key's name
        return text


# One PromQL label matcher: name, operator, a double-quoted string (fleet/matchers.py
# reads the three parts).
MATCHER = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*')
_DURATION = re.compile(r"[1-9][0-9]*(ms|s|m|h)")


class BasicAuth(_Strict):
    username: str
    password_file: str | None = None  # the password is read from a file or an environment
    password_env: str | None = None  # variable when the fleet opens, never kept in the config

    @model_validator(mode="after")
    def _one_password(self) -> BasicAuth:
        if (self.password_file is None) == (self.password_env is None):
            raise ValueError("give one of password_file and password_env")
        return self


class Fleet(_Strict):
    """`[fleets.NAME]`: servers a Prometheus query API scrapes (TLS always verified), or
    the pods at a Kubernetes address."""

    prometheus: str | None = None  # the query API's base URL (Prometheus, Thanos, Mimir...)
    kubernetes: PodAddressText | None = None  # k8s://[CONTEXT/]NAMESPACE[/WORKLOAD]
    selector: str | None = None  # with kubernetes: a label selector (kubectl -l)
    bearer_token_file: str | None = None
    bearer_token_env: str | None = None
    basic_auth: BasicAuth | None = None
    ca_file: str | None = None  # a CA bundle to trust besides the system's
    match: list[str] = []  # label matchers choosing the servers: 'job=~"vllm.*"'
    gpu_match: list[str] = []  # label matchers choosing the dcgm-exporter series
    host: str | None = None  # SSH host of a server, a template: "{instance_host}"
    hosts: dict[str, str] = {}  # "10.0.0.5:8000" (or "10.0.0.5") -> SSH host
    refresh_s: Annotated[float, Field(ge=1.0)] = 5.0
    timeout_s: Annotated[float, Field(gt=0)] = 3.0  # the most one refresh may take
    rate_window: str = "1m"  # the range of rate() and the latency quantiles
    follow: Annotated[int, Field(ge=1)] = 8  # down servers followed over SSH at once

    @field_validator("prometheus")
    @classmethod
    def _api_url(cls, url: str | None) -> str | None:
        if url is None:
            return None
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected an http:// or https:// URL of the query API")
        if parts.username is not None or parts.password is not None:
            # Said without the URL: it holds a secret.
            raise ValueError("a user or password in the URL; use basic_auth")
        if parts.query or parts.fragment:
            raise ValueError("expected the API's base URL, without ?query or #fragment")
        return url.rstrip("/")

    @field_validator("selector")
    @classmethod
    def _label_selector(cls, text: str | None) -> str | None:
        if text is not None:
            check_selector(text)
        return text

    @field_validator("match", "gpu_match")
    @classmethod
    def _matchers(cls, matchers: list[str]) -> list[str]:
        for m in matchers:
            if not MATCHER.fullmatch(m):
                raise ValueError(f'{m!r} is not a label matcher like job=~"vllm.*"')
        return [m.strip() for m in matchers]

    @field_validator("host")
    @classmethod
    def _template(cls, template: str | None) -> str | None:
        if template is not None:
            try:
                fields = [
                    f for _, f, spec, conv in string.Formatter().parse(template) if f is not None
                ]
            except ValueError as e:
                raise ValueError(f"not a template: {e}") from None
            bad = [f for f in fields if not f.isidentifier()]
            if bad or not fields:
                raise ValueError('expected labels in braces, like "{instance_host}"')
        return template

    @field_validator("rate_window")
    @classmethod
    def _duration(cls, window: str) -> str:
        if not _DURATION.fullmatch(window):
            raise ValueError("expected a PromQL duration like 30s, 1m or 5m")
        return window

    @model_validator(mode="after")
    def _one_source(self) -> Fleet:
        if (self.prometheus is None) == (self.kubernetes is None):
            raise ValueError("give one of prometheus (a query API) and kubernetes (k8s://...)")
        if self.kubernetes is not None:
            kept = {"kubernetes", "selector", "refresh_s", "follow"}
            if other := sorted(self.model_fields_set - kept):
                keys = ", ".join(other)
                raise ValueError(f"{keys}: only a Prometheus fleet takes it, not one of pods")
        elif self.selector is not None:
            raise ValueError("selector: for a kubernetes fleet (Prometheus takes match)")
        return self

    @model_validator(mode="after")
    def _one_auth(self) -> Fleet:
        given = [self.bearer_token_file, self.bearer_token_env, self.basic_auth]
        if sum(a is not None for a in given) > 1:
            raise ValueError("give one of bearer_token_file, bearer_token_env and basic_auth")
        return self


class Config(_Strict):
    theme: str | None = None  # any bundled or built-in Textual theme name
    notifications: Notifications = Notifications()
    keys: dict[Literal[KEY_ACTIONS], str] = {}  # action -> key(s): {"search": "ctrl+f"}
    hosts: dict[str, HostProfile] = {}  # by ssh alias
    groups: dict[str, list[str]] = {}  # name -> host aliases, for `sgwatch @name`
    fleets: dict[str, Fleet] = {}  # name -> a Prometheus query API, for `sgwatch fleet NAME`

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
    if isinstance(got, dict):  # a whole table is noise, and a fleet's may hold a secret
        return f"{path}: `{key}`: {err['msg'].lower()}"
    return f"{path}: `{key}`: {err['msg'].lower()} (got {got!r})"
