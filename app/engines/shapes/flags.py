"""A flag catalog: every option of one engine release, read the way argparse reads it.

The common shape of every engine's flags. A catalog is the JSON an engine's
host_catalog.py prints from the host's own parser (live) or that a generator
script wrote from the engine's source (bundled, in the engine's catalog/).
Lookup follows argparse with `allow_abbrev=True`: an exact name or alias,
`--no-X` for BooleanOptional flags, or a prefix that matches exactly one option
string; a prefix that matches several is refused, as argparse refuses it
("ambiguous option"). `check` reads a launch command against the catalog before
anything is restarted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr

from sgwatch.core.cmdline import Flag, FlagRef, LaunchCommand

Kind = Literal["store_true", "store_false", "store_const", "boolean_optional", "value", "choice"]
SWITCHES = ("store_true", "store_false", "store_const", "boolean_optional")
HELP = ("-h", "--help")  # argparse's own; they count when a prefix is matched

CUDA_GRAPHS = "CUDA graphs"
SPECULATIVE = "Speculative decoding"
PARALLELISM = "Parallelism"
MEMORY = "Memory"
SCHEDULING = "Scheduling"
ATTENTION = "Attention"
OTHER = "Other"
GROUPS = (CUDA_GRAPHS, SPECULATIVE, PARALLELISM, MEMORY, SCHEDULING, ATTENTION, OTHER)
# Matched against whole words of the setting's name; the first group that matches wins,
# so narrower topics come first ("enable_dp_attention" is parallelism,
# "speculative_attention_mode" speculative decoding).
_GROUP_RULES = tuple(
    (group, re.compile(rf"(?:^|_)(?:{words})(?:_|$)"))
    for group, words in (
        (
            CUDA_GRAPHS,
            "cuda_graph|cudagraph|piecewise|torch_compile|compilation_config|enforce_eager",
        ),
        (SPECULATIVE, "speculative|spec|eagle|ngram|draft"),
        (
            PARALLELISM,
            "(?:tp|dp|pp|ep|cp|dcp|dwdp)_size|\\w*parallel_size|dp_attention|dp_lm_head"
            "|nnodes|node_rank|dist|nccl|all_reduce|allreduce|moe_a2a|deepep|experts?|eplb",
        ),
        (
            MEMORY,
            "mem_fraction_static|max_total_tokens|kv_cache|kvcache|page_size|radix|hicache"
            "|hierarchical_cache|offload|memory|swa|mamba",
        ),
        (
            SCHEDULING,
            "schedule|scheduling|chunked_prefill|max_running_requests|max_prefill_tokens"
            "|max_queued_requests|overlap|mixed_chunk|continuous_decode|stream_interval"
            "|priority|micro_batch|prefill_delayer|dynamic_chunking",
        ),
        (ATTENTION, "attention|attn|mla"),
    )
)


class FlagOption(BaseModel):
    """One option: its spellings, what it stores, and what the server starts with."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    names: tuple[str, ...]  # canonical first, then aliases
    dest: str  # argparse's dest
    kind: Kind
    type: str | None = None  # "int", "float", "str", "json", or the parser's own name
    nargs: int | str | None = None
    const: Any = None  # what a store_const switch writes
    default: Any = None
    default_known: bool = True  # False: the default is computed where static reading stops
    choices: tuple[Any, ...] | None = None
    required: bool = False
    deprecated: bool = False  # accepted, with a warning or a note that it goes away
    removed: bool = False  # still registered, only to refuse the launch
    replacement: str | None = None  # what to use instead, as the engine names it
    field: str | None = None  # the resolved setting's key, where not `dest` (SGLang 0.4: tp_size)
    resolvable: bool = False  # the server may fill it during resolution (SGLang 0.5.2x)
    fallback: Any = None  # the value it gets when left None (SGLang 0.5.2x)
    help: str = ""  # live catalogs only: the host's own help text

    @property
    def name(self) -> str:
        return self.names[0]

    @property
    def aliases(self) -> tuple[str, ...]:
        return self.names[1:]

    @property
    def setting(self) -> str:
        """The key of this option in the server's resolved settings."""
        return self.field or self.dest

    @property
    def takes_value(self) -> bool:
        return self.kind not in SWITCHES

    @property
    def auto(self) -> bool:
        """An Optional[bool] switch: unset means the server decides (`--enable-lora`)."""
        return self.kind == "store_true" and self.default is None and self.default_known

    @property
    def negations(self) -> tuple[str, ...]:
        if self.kind != "boolean_optional":
            return ()
        return tuple("--no-" + n[2:] for n in self.names if n.startswith("--"))

    @property
    def option_strings(self) -> tuple[str, ...]:
        return (*self.names, *self.negations)

    @property
    def start_value(self) -> Any:
        """The value before resolution: the default, or the declared fallback for None."""
        return self.fallback if self.default is None and self.fallback is not None else self.default

    @property
    def group(self) -> str:
        return next((g for g, rule in _GROUP_RULES if rule.search(self.setting)), OTHER)

    def switch_value(self, spelling: str) -> Any:
        if spelling in self.negations:
            return False
        return {"store_false": False, "store_const": self.const}.get(self.kind, True)

    def typed(self, values: Sequence[str]) -> Any:
        """The value argparse stores for these command-line values; ValueError if it
        refuses one (bad number, bad JSON, not a choice)."""
        items = [self._convert(v) for v in values]
        for v in items:
            if self.choices is not None and v not in self.choices:
                allowed = ", ".join(map(str, self.choices))
                raise ValueError(f"invalid choice {v!r} (choose from {allowed})")
        if self.nargs in ("+", "*") or isinstance(self.nargs, int):
            return items
        return items[0] if items else self.const

    def _convert(self, text: str) -> Any:
        try:
            if self.type == "int":
                return int(text)
            if self.type == "float":
                return float(text)
            if self.type == "json":
                return json.loads(text)
        except ValueError:
            raise ValueError(f"invalid {self.type} value: {text!r}") from None
        return text

    def arity_problem(self, count: int) -> str | None:
        """Why `count` values after this flag would make argparse fail, if they would."""
        if not self.takes_value:
            return f"takes no value, got {count}" if count else None
        n = self.nargs
        if n is None and count != 1:
            return "expects one value" if count == 0 else f"expects one value, got {count}"
        if n == "?" and count > 1:
            return f"expects at most one value, got {count}"
        if n == "+" and count == 0:
            return "expects at least one value"
        if isinstance(n, int) and count != n:
            return f"expects {n} values, got {count}"
        return None


LookupStatus = Literal["exact", "alias", "negated", "abbrev", "ambiguous", "unknown", "help"]


@dataclass(frozen=True, slots=True)
class Lookup:
    token: str  # as written, `=value` dropped
    status: LookupStatus
    option: FlagOption | None = None
    matched: str | None = None  # the option string it resolved to
    candidates: tuple[str, ...] = ()  # what an ambiguous prefix could mean

    @property
    def ok(self) -> bool:
        return self.option is not None


@dataclass(frozen=True, slots=True)
class Problem:
    flag: str  # as written; "" for the command as a whole
    level: Literal["error", "warning"]
    message: str


class Catalog(BaseModel):
    model_config = ConfigDict(extra="ignore")

    engine: str = ""  # as the catalog names it ("sglang"); every catalog written says
    label: str = ""  # how messages name the engine ("SGLang"); its name when empty
    version: str | None = None
    origin: str = ""  # "live", or the archive a bundled catalog was read from
    python: str | None = None  # live: the host interpreter's version
    options: tuple[FlagOption, ...]

    _strings: dict[str, FlagOption] = PrivateAttr(default_factory=dict)
    _dests: dict[str, FlagOption] = PrivateAttr(default_factory=dict)

    def model_post_init(self, _context: Any) -> None:
        for opt in self.options:
            for s in opt.option_strings:
                self._strings.setdefault(s, opt)
        # A retired spelling may write the same dest (SGLang 0.5.19's
        # `--disable-piecewise-cuda-graph` stores cuda_graph_backend_prefill): the setting
        # belongs to the current flag.
        for opt in sorted(self.options, key=lambda o: o.deprecated or o.removed):
            self._dests.setdefault(opt.dest, opt)
            self._dests.setdefault(opt.setting, opt)

    @property
    def engine_label(self) -> str:
        """The engine as messages name it ("SGLang", "vLLM")."""
        return self.label or self.engine

    @classmethod
    def from_json(cls, text: str) -> Catalog:
        return cls.model_validate_json(text)

    def lookup(self, token: str) -> Lookup:
        name = token.split("=", 1)[0] if token.startswith("-") else token
        if name in HELP:
            return Lookup(name, "help", matched=name)
        if name in self._strings:
            opt = self._strings[name]
            status: LookupStatus = "exact" if name == opt.name else "alias"
            return Lookup(name, "negated" if name in opt.negations else status, opt, name)
        if not name.startswith("--") or len(name) < 3:
            return Lookup(name, "unknown")
        matches = [s for s in (*self._strings, *HELP) if s.startswith(name)]
        if len(matches) > 1:
            return Lookup(name, "ambiguous", candidates=tuple(matches))
        if not matches:
            return Lookup(name, "unknown")
        if matches[0] in HELP:
            return Lookup(name, "help", matched=matches[0])
        return Lookup(name, "abbrev", self._strings[matches[0]], matches[0])

    def get(self, name: str) -> FlagOption | None:
        """An option by dest, server_args field, or exact spelling (with or without dashes)."""
        if name in self._dests:
            return self._dests[name]
        return self._strings.get(name if name.startswith("-") else "--" + name)

    def ref(self, token: str) -> FlagRef | None:
        """The resolver core.launch edits and diffs with (None: unknown or ambiguous)."""
        found = self.lookup(token)
        opt = found.option
        if opt is None or found.matched is None:
            return None
        negation = opt.negations[0] if opt.negations else None
        return FlagRef(
            dest=opt.dest,
            option=opt.name,
            takes_value=opt.takes_value,
            switch_value=opt.switch_value(found.matched),
            negation=negation,
            default=opt.start_value,
        )

    def requested(self, cmd: LaunchCommand) -> dict[str, Any]:
        """Setting -> the value the command's flags ask for, typed as argparse would store
        it (a value the parser would refuse stays as written); unknown flags are left out."""
        out: dict[str, Any] = {}
        for flag in cmd.flags:
            found = self.lookup(flag.name)
            opt = found.option
            if opt is None or found.matched is None:
                continue
            if not opt.takes_value:
                out[opt.setting] = opt.switch_value(found.matched)
                continue
            try:
                out[opt.setting] = opt.typed(flag.values)
            except ValueError:
                out[opt.setting] = flag.values[0] if len(flag.values) == 1 else list(flag.values)
        return out

    def by_group(self) -> dict[str, list[FlagOption]]:
        """Options per panel group, in GROUPS order, each group in catalog order."""
        out: dict[str, list[FlagOption]] = {g: [] for g in GROUPS}
        for opt in self.options:
            out[opt.group].append(opt)
        return out

    def check(
        self, cmd: LaunchCommand, others: Sequence[Catalog] = (), positional: str | None = None
    ) -> list[Problem]:
        """What the host's parser would refuse (errors) or warn about, flag by flag.

        `others` are catalogs of other versions, to say where an unknown flag
        still exists ("--enable-piecewise-cuda-graph: not in 0.5.23; 0.5.10 has it").
        `positional` is the setting a `serve` launcher's argument gives (the model).
        """
        problems: list[Problem] = []
        serve = cmd.program[-1:] == ("serve",)
        if len(cmd.positional) > (1 if serve else 0):
            extra = cmd.positional[1:] if serve else cmd.positional
            problems.append(Problem("", "error", f"unrecognized arguments: {' '.join(extra)}"))
        seen: set[str] = set()
        for flag in cmd.flags:
            opt = self._check_flag(flag, problems, others)
            if opt is not None:
                seen.add(opt.dest)
        given_model = serve and bool(cmd.positional)
        for opt in self.options:
            given = given_model and opt.dest == positional
            if opt.required and opt.dest not in seen and not given:
                problems.append(Problem("", "error", f"required: {opt.name}"))
        return problems

    def _check_flag(
        self, flag: Flag, problems: list[Problem], others: Sequence[Catalog]
    ) -> FlagOption | None:
        found = self.lookup(flag.name)
        name, opt = flag.name, found.option
        version = self.version or "this version"
        who = self.engine_label

        def say(level: Literal["error", "warning"], message: str) -> None:
            problems.append(Problem(name, level, message))

        if found.status == "ambiguous":
            say("error", f"ambiguous abbreviation: could match {', '.join(found.candidates)}")
            return None
        if found.status == "help":
            say("error", "prints the help and exits instead of starting the server")
            return None
        if opt is None:
            where = [o.version for o in others if o.version and o.lookup(name).ok]
            hint = f" ({', '.join(where)} accepted it)" if where else ""
            say("error", f"not a flag of {who} {version}{hint}")
            return None
        if found.status == "abbrev":
            say("warning", f"abbreviation of {found.matched}; write it in full")
        use = f"; use {opt.replacement}" if opt.replacement else ""
        if opt.removed:
            say("error", f"refused by {who} {version}{use}")
        elif opt.deprecated:
            say("warning", f"deprecated{use}")
        if why := opt.arity_problem(len(flag.values)):
            say("error", why)
        elif opt.takes_value:
            try:
                opt.typed(flag.values)
            except ValueError as e:
                say("error", str(e))
        return opt


@dataclass(frozen=True, slots=True)
class Selection:
    """The catalog a server's flags are read with, and where it came from."""

    catalog: Catalog
    source: Literal["live", "bundled"]
    note: str  # one line for the panel: where the flags come from, and why
