"""Launch command model: argv <-> an ordered list of flags, edits, and a flag diff.

A command as discovery finds it (`/proc/PID/cmdline`) or as a config writes it:

    [prefix: env assignments and wrappers] program [positional...] [flags...]

`CUDA_VISIBLE_DEVICES=0,1 nohup python3 -u -m sglang.launch_server --tp 2 --mem-fraction-static=0.8`
has the prefix `CUDA_VISIBLE_DEVICES=0,1 nohup`, the program `python3 -u -m
sglang.launch_server` and two flags; `sglang serve MODEL --port 30000` has the
positional `MODEL`. The program is found by shape (a Python interpreter with
`-m MODULE` or a script, or a launcher the engines registry declares with
`register_launchers`: an executable and its subcommand, `sglang serve`, `vllm
serve`, `sgwatch sim`, or a plain executable, `llama-server`, `trtllm-serve`), so
any wrapper before it (`env A=B`, `exec`, `setsid`, `uv run`) is kept as prefix.

Parsing is syntactic and keeps every token: `argv(parse(x)) == x` for any x.
A flag takes the non-flag tokens after it as its values; what a flag means
(its dest, whether it takes a value, its `--no-` form) comes from a resolver,
which the engine's flag catalog provides, so aliases and abbreviations edit and
diff as the flag they stand for. Without one, a flag is known by its spelling.
Edits return a new command and leave every other token where it was.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"python[0-9.]*")
# argparse reads these as values, not options (its _negative_number_matcher).
_NEGATIVE_NUMBER = re.compile(r"-\d+|-\d*\.\d+")
# Executable name -> the subcommands that make it a server (`sglang serve`), None for a
# plain executable (`llama-server`). The engines know them and the registry declares
# them with `register_launchers` (core cannot import engines).
_LAUNCHERS: dict[str, set[str | None]] = {}
_declarers: list[Callable[[], object]] = []  # see declare_launchers_with
# Interpreter options that take the next token as their value (`-X dev`).
_PYTHON_VALUE_OPTIONS = ("-X", "-W")
# Names whose values must not reach a screen or a history file (as in host discovery).
_SECRET_ENV = re.compile("TOKEN|KEY|SECRET|PASSWORD", re.IGNORECASE)
_SECRET_FLAG_WORDS = frozenset({"key", "token", "secret", "password", "passwd"})
MASK = "***"


class LaunchError(ValueError):
    """The text is not a launch command this model can edit safely."""


@dataclass(frozen=True, slots=True)
class FlagRef:
    """What a flag spelling stands for, as the engine's parser sees it."""

    dest: str  # the setting it writes; aliases and abbreviations share it
    option: str  # the canonical spelling, written when a flag is added
    takes_value: bool
    switch_value: object = True  # what a bare switch sets (False for `--no-X`)
    negation: str | None = None  # the `--no-X` spelling of a BooleanOptional flag
    default: object = None


Resolver = Callable[[str], FlagRef | None]


@dataclass(frozen=True, slots=True)
class Flag:
    name: str  # as written, without `=value`: "--tp", "--no-enable-x"
    values: tuple[str, ...] = ()
    inline: bool = False  # written `--name=value`: the first value shares the token

    @property
    def tokens(self) -> tuple[str, ...]:
        if self.inline:
            return (f"{self.name}={self.values[0]}", *self.values[1:])
        return (self.name, *self.values)


@dataclass(frozen=True, slots=True)
class LaunchCommand:
    prefix: tuple[str, ...]  # env assignments and wrappers, as written
    program: tuple[str, ...]  # ("python3", "-m", "sglang.launch_server"), ("sglang", "serve")
    positional: tuple[str, ...] = ()  # e.g. the model of `sglang serve MODEL`
    flags: tuple[Flag, ...] = ()

    @property
    def argv(self) -> list[str]:
        return [
            *self.prefix,
            *self.program,
            *self.positional,
            *(t for f in self.flags for t in f.tokens),
        ]

    @property
    def server_argv(self) -> list[str]:
        """The server's own argv, without the prefix: what a detached launch runs, with
        `env` passed on its own (a discovered /proc cmdline has no prefix anyway)."""
        return self.argv[len(self.prefix) :]

    @property
    def shell(self) -> str:
        """One shell word per argument, quoted: a value stays one literal argument."""
        return shlex.join(self.argv)

    @property
    def env(self) -> dict[str, str]:
        """Assignments in the prefix (`A=B python ...`, `env A=B python ...`)."""
        return dict(t.split("=", 1) for t in self.prefix if _ASSIGNMENT.match(t))

    @property
    def module(self) -> str | None:
        """The module run with `-m` (`sglang.launch_server`), if any."""
        for i, t in enumerate(self.program):
            if t == "-m" and i + 1 < len(self.program):
                return self.program[i + 1]
            if t.startswith("-m") and len(t) > 2:
                return t[2:]
        return None


# -- parsing -------------------------------------------------------------------


def parse(argv: Sequence[str]) -> LaunchCommand:
    argv = list(argv)
    start, end = _find_program(argv)
    rest = argv[end:]
    n = 0
    while n < len(rest) and not is_flag(rest[n]):
        n += 1
    return LaunchCommand(
        prefix=tuple(argv[:start]),
        program=tuple(argv[start:end]),
        positional=tuple(rest[:n]),
        flags=tuple(_group_flags(rest[n:])),
    )


def parse_shell(text: str) -> LaunchCommand:
    """A command written as one shell line (a config's launch command).

    Only a simple command: an unquoted operator, redirection or expansion would
    mean something else once each word is quoted, so it is refused by name.
    """
    if bad := _unquoted_specials(text):
        raise LaunchError(f"not a simple command: unquoted {bad!r} in {text!r}")
    try:
        return parse(shlex.split(text))
    except ValueError as e:
        raise LaunchError(f"cannot split {text!r}: {e}") from None


def is_flag(token: str) -> bool:
    """Whether argparse would read `token` as an option rather than a value."""
    if len(token) < 2 or token[0] != "-" or _NEGATIVE_NUMBER.fullmatch(token):
        return False
    return " " not in token.split("=", 1)[0]


def _find_program(argv: list[str]) -> tuple[int, int]:
    while _declarers:  # the registry's engines, loaded when a launcher is first looked for
        _declarers.pop()()
    for i, token in enumerate(argv):
        if _ASSIGNMENT.match(token):
            continue
        base = token.rsplit("/", 1)[-1]
        if _PYTHON.fullmatch(base):
            end = _python_program_end(argv, i)
            if end is not None:
                return i, end
        elif base in _LAUNCHERS:
            subcommands = _LAUNCHERS[base]
            if i + 1 < len(argv) and argv[i + 1] in subcommands:
                return i, i + 2
            if None in subcommands:
                return i, i + 1
    known = sorted(f"{p} {s}" if s else p for p, subs in _LAUNCHERS.items() for s in subs)
    shapes = ["python -m MODULE", *known]
    raise LaunchError(f"no server launcher ({', '.join(shapes)}) in {shlex.join(argv)}")


def declare_launchers_with(declare: Callable[[], object]) -> None:
    """Have `declare` (the engines registry, which this module cannot import) register
    every launcher once, just before the first command is parsed: an engine's plug-ins
    then load when needed, not whenever the registry is imported."""
    _declarers[:] = [declare]


def register_launchers(launchers: Iterable[Sequence[str]]) -> None:
    """Make each launcher one `parse` recognises: `("vllm", "serve")`, an executable and
    the subcommand that starts a server, or `("llama-server",)`, a plain executable."""
    for launcher in launchers:
        if len(launcher) not in (1, 2):
            raise ValueError(f"a launcher is an executable and at most one subcommand: {launcher}")
        program, *sub = launcher
        _LAUNCHERS.setdefault(program, set()).add(sub[0] if sub else None)


def _python_program_end(argv: list[str], i: int) -> int | None:
    """Index after `python [options] (-m MODULE | SCRIPT)`, or None if it is not that."""
    j = i + 1
    while j < len(argv):
        t = argv[j]
        if t == "-m":
            return j + 2 if j + 1 < len(argv) else None
        if t.startswith("-m"):
            return j + 1
        if t in _PYTHON_VALUE_OPTIONS:
            j += 2
        elif t.startswith("-c") or t == "-":
            return None  # code from the command line or stdin: nothing to edit
        elif t.startswith("-"):
            j += 1
        else:
            return j + 1
    return None


def _group_flags(tokens: list[str]) -> list[Flag]:
    flags: list[Flag] = []
    for t in tokens:
        if is_flag(t):
            name, eq, value = t.partition("=")
            flags.append(Flag(name, (value,), True) if eq else Flag(t))
        else:
            last = flags[-1]
            flags[-1] = replace(last, values=(*last.values, t))
    return flags


def _unquoted_specials(text: str) -> str | None:
    """The first character the shell would act on (operator, expansion, glob), if any."""
    quote = None
    escaped = False
    word_start = True
    for c in text:
        if escaped:
            escaped = False
        elif c == "\\" and quote != "'":
            escaped = True
        elif quote:
            if c == quote:
                quote = None
            elif quote == '"' and c in "$`":
                return c
        elif c in "'\"":
            quote = c
        elif c in ";&|<>()`$*?[\n" or (c == "~" and word_start):
            return c
        word_start = c in " \t" and not quote and not escaped
    return None


# -- reading ---------------------------------------------------------------------


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()  # a setting the command does not mention


def key_of(flag: Flag, resolve: Resolver | None = None) -> str:
    """The setting a flag writes: its dest when the resolver knows it, else its spelling."""
    ref = resolve(flag.name) if resolve else None
    return ref.dest if ref else flag.name


def setting_of(flag: Flag, resolve: Resolver | None = None) -> object:
    """What one occurrence asks for: a switch's value, else its values (one or a tuple)."""
    ref = resolve(flag.name) if resolve else None
    if ref is not None and not ref.takes_value:
        return ref.switch_value
    if not flag.values:
        return True
    return flag.values[0] if len(flag.values) == 1 else flag.values


def settings(cmd: LaunchCommand, resolve: Resolver | None = None) -> dict[str, object]:
    """Each setting the flags ask for; a repeated flag counts as its last occurrence."""
    out: dict[str, object] = {}
    for f in cmd.flags:
        out[key_of(f, resolve)] = setting_of(f, resolve)
    return out


def value_of(cmd: LaunchCommand, name: str, resolve: Resolver | None = None) -> object:
    """The setting a flag (any spelling) has in the command, or MISSING."""
    key, _ = _target(name, resolve)
    return settings(cmd, resolve).get(key, MISSING)


# -- edits -----------------------------------------------------------------------


def enable(cmd: LaunchCommand, name: str, resolve: Resolver | None = None) -> LaunchCommand:
    """Turn a boolean flag on: rewrite a `--no-X` in place, or add the flag at the end."""
    key, ref = _target(name, resolve)
    _require_switch(name, ref)
    if settings(cmd, resolve).get(key, MISSING) is True:
        return cmd
    option = ref.option if ref else _dashed(name)
    return _put(cmd, key, Flag(option), resolve)


def disable(cmd: LaunchCommand, name: str, resolve: Resolver | None = None) -> LaunchCommand:
    """Turn a boolean flag off: drop it, or write `--no-X` when it is on by default."""
    key, ref = _target(name, resolve)
    _require_switch(name, ref)
    if ref is not None and ref.negation and ref.default is True:
        if settings(cmd, resolve).get(key, MISSING) is False:
            return cmd
        return _put(cmd, key, Flag(ref.negation), resolve)
    return unset(cmd, name, resolve)


def set_value(
    cmd: LaunchCommand, name: str, value: str | Sequence[str], resolve: Resolver | None = None
) -> LaunchCommand:
    """Give a flag a value, in place of its first occurrence (spelling and `=` style
    kept) or at the end; other occurrences go, since the last one would win."""
    key, ref = _target(name, resolve)
    if ref is not None and not ref.takes_value:
        raise LaunchError(f"{ref.option} is a boolean flag: enable or disable it")
    values = (value,) if isinstance(value, str) else tuple(value)
    if not values:
        raise LaunchError(f"no value given for {_dashed(name)}")
    first = next((f for f in cmd.flags if key_of(f, resolve) == key), None)
    spelling = first.name if first else (ref.option if ref else _dashed(name))
    # A value argparse would take for an option only reaches it as `--name=value`.
    dashed = [v for v in values if is_flag(v)]
    if dashed and len(values) > 1:
        raise LaunchError(f"{spelling}: a list value cannot start with '-': {dashed[0]!r}")
    inline = len(values) == 1 and (bool(dashed) or (first is not None and first.inline))
    return _put(cmd, key, Flag(spelling, values, inline), resolve)


def unset(cmd: LaunchCommand, name: str, resolve: Resolver | None = None) -> LaunchCommand:
    """Remove every occurrence of a flag, whatever its spelling."""
    key, _ = _target(name, resolve)
    return replace(cmd, flags=tuple(f for f in cmd.flags if key_of(f, resolve) != key))


def _target(name: str, resolve: Resolver | None) -> tuple[str, FlagRef | None]:
    option = _dashed(name)
    ref = resolve(option) if resolve else None
    return (ref.dest if ref else option), ref


def _dashed(name: str) -> str:
    name = name.strip()
    if not name or name == "-" or name.startswith("---") or " " in name:
        raise LaunchError(f"not a flag name: {name!r}")
    return name if name.startswith("-") else "--" + name


def _require_switch(name: str, ref: FlagRef | None) -> None:
    if ref is not None and ref.takes_value:
        raise LaunchError(f"{ref.option} takes a value: set it")


def _put(cmd: LaunchCommand, key: str, flag: Flag, resolve: Resolver | None) -> LaunchCommand:
    out: list[Flag] = []
    placed = False
    for f in cmd.flags:
        if key_of(f, resolve) != key:
            out.append(f)
        elif not placed:
            out.append(flag)
            placed = True
    if not placed:
        out.append(flag)
    return replace(cmd, flags=tuple(out))


# -- diff --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Change:
    """One setting that differs between two commands, with the tokens on each side."""

    key: str  # dest, or the spelling of a flag the resolver does not know;
    # "(program)", "(positional)" or "env NAME" for the parts before the flags
    before: tuple[str, ...] | None  # None: absent
    after: tuple[str, ...] | None

    @property
    def kind(self) -> Literal["added", "removed", "changed"]:
        if self.before is None:
            return "added"
        return "removed" if self.after is None else "changed"


def diff(old: LaunchCommand, new: LaunchCommand, resolve: Resolver | None = None) -> list[Change]:
    """What changes from `old` to `new`, setting by setting, in command order.

    Flags compare by what they ask for, so `--tp 2` -> `--tensor-parallel-size 2`
    or moving a flag is no change; a repeated flag counts as its last occurrence.
    """
    out: list[Change] = []
    for key, a, b in (
        ("(program)", old.program, new.program),
        ("(positional)", old.positional, new.positional),
    ):
        if a != b:
            out.append(Change(key, a or None, b or None))
    old_env, new_env = old.env, new.env
    for name in {**old_env, **new_env}:
        a, b = old_env.get(name), new_env.get(name)
        if a != b:
            out.append(
                Change(
                    f"env {name}",
                    None if a is None else (f"{name}={a}",),
                    None if b is None else (f"{name}={b}",),
                )
            )
    before, after = _last_flags(old, resolve), _last_flags(new, resolve)
    for key in {**before, **after}:
        a, b = before.get(key), after.get(key)
        if a is None or b is None or setting_of(a, resolve) != setting_of(b, resolve):
            out.append(Change(key, a and a.tokens, b and b.tokens))
    return out


def _last_flags(cmd: LaunchCommand, resolve: Resolver | None) -> dict[str, Flag]:
    out: dict[str, Flag] = {}
    for f in cmd.flags:
        out[key_of(f, resolve)] = f
    return out


# -- display -------------------------------------------------------------------------


def masked(cmd: LaunchCommand) -> LaunchCommand:
    """The command with secret values replaced by MASK, for screens and history files:
    env assignments named like TOKEN/KEY/SECRET/PASSWORD, and flags such as `--api-key`."""
    prefix = tuple(
        f"{t.split('=', 1)[0]}={MASK}"
        if _ASSIGNMENT.match(t) and _SECRET_ENV.search(t.split("=", 1)[0])
        else t
        for t in cmd.prefix
    )
    flags = tuple(
        replace(f, values=tuple(MASK for _ in f.values)) if _secret_flag(f.name) else f
        for f in cmd.flags
    )
    return replace(cmd, prefix=prefix, flags=flags)


def _secret_flag(name: str) -> bool:
    return bool(_SECRET_FLAG_WORDS.intersection(re.split(r"[-_]+", name.lower())))
