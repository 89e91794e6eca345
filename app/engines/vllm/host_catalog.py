"""Runs on the host with the server's own interpreter (sent over stdin; stdlib only,
Python >= 3.8): vLLM's live flag catalog (ENGINE.catalog_program).

Builds `vllm serve`'s real parser, `make_arg_parser(FlexibleArgumentParser())`,
and prints every option as one JSON object, the shape of the bundled catalogs
that scripts/gen_vllm_catalog.py writes:
    {"engine": "vllm", "version": ..., "origin": "live", "python": ...,
     "options": [{"names", "dest", "kind", "type", "nargs", "const", "default",
                  "default_known", "choices", "deprecated", "help"}, ...]}
(keys at their default value are left out). The modules moved between releases
(vllm.utils -> vllm.utils.argparse_utils, openai.cli_args -> common.cli_args):
each place is tried. When vLLM cannot be imported it prints {"engine": "vllm",
"error": "..."} and exits 0: the caller falls back to a bundled catalog.
Importing vLLM's argument module loads torch: seconds, no GPU.
"""

import argparse
import contextlib
import importlib
import json
import sys

PARSERS = ("vllm.utils.argparse_utils", "vllm.utils")
MAKERS = ("vllm.entrypoints.openai.cli_args", "vllm.entrypoints.common.cli_args")
TYPES = {"int": "int", "float": "float", "str": "str", "loads": "json", "human_readable_int": "int"}


def first(modules, name):
    errors = []
    for module in modules:
        try:
            return getattr(importlib.import_module(module), name)
        except Exception as e:  # moved, or vLLM itself failed to import
            errors.append(f"{module}: {type(e).__name__}: {e}")
    raise ImportError("; ".join(errors))


def jsonable(value):
    if isinstance(value, (set, frozenset)):
        value = sorted(value, key=str)
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return None, False
    return value, True


def type_name(action):
    fn = action.type
    if fn is None:
        return "str"
    name = getattr(fn, "__name__", type(fn).__name__)
    # vLLM wraps types (optional_type, parse_type): the wrapped one is in the closure
    for cell in getattr(fn, "__closure__", None) or ():
        inner = getattr(cell.cell_contents, "__name__", "")
        if inner in TYPES:
            name = inner
    if name.startswith("parse_dataclass") or name == "union_dict_and_str":
        return "json"
    return TYPES.get(name, "str")


def describe(action, deprecated):
    names = list(action.option_strings)
    cls = type(action).__name__
    nargs, const, type_ = action.nargs, None, None
    if isinstance(action, argparse._StoreTrueAction):
        kind = "store_true"
    elif isinstance(action, argparse._StoreFalseAction):
        kind = "store_false"
    elif isinstance(action, argparse._StoreConstAction):
        kind, const = "store_const", action.const
    elif cls == "BooleanOptionalAction":
        kind = "boolean_optional"
        names = [n for n in names if not n.startswith("--no-")]
    else:
        kind = "choice" if action.choices else "value"
        type_ = type_name(action)
        const = action.const
    if kind not in ("value", "choice"):
        nargs = None
    default, known = jsonable(action.default)
    choices = None
    if action.choices is not None:
        choices, ok = jsonable([c for c in action.choices if c is not None])
        choices = choices if ok else None
    out = {"names": names, "dest": action.dest, "kind": kind}
    for key, value, empty in (
        ("type", type_, None),
        ("nargs", nargs, None),
        ("const", jsonable(const)[0], None),
        ("default", default, None),
        ("default_known", known, True),
        ("choices", choices, None),
        ("deprecated", deprecated, False),
        ("help", (action.help or "").replace("%%", "%"), ""),
    ):
        if value != empty:
            out[key] = value
    return out


def main():
    # What vLLM prints while importing goes to stderr: stdout carries only the JSON.
    with contextlib.redirect_stdout(sys.stderr):
        try:
            parser_cls = first(PARSERS, "FlexibleArgumentParser")
            make_arg_parser = first(MAKERS, "make_arg_parser")
            parser = make_arg_parser(parser_cls(prog="vllm serve"))
        except Exception as e:  # any failure means: use a bundled catalog
            return {"engine": "vllm", "error": f"{type(e).__name__}: {e}"}
    from importlib.metadata import PackageNotFoundError, version

    try:
        vllm_version = version("vllm")
    except PackageNotFoundError:  # importable from a source tree, not installed
        vllm_version = None
    retired = getattr(parser_cls, "_deprecated", set())
    options = [
        describe(a, a in retired or bool(getattr(a, "deprecated", False)))
        for a in parser._actions
        if a.option_strings and not isinstance(a, argparse._HelpAction)
    ]
    return {
        "engine": "vllm",
        "version": vllm_version,
        "origin": "live",
        "python": sys.version.split()[0],
        "options": options,
    }


if __name__ == "__main__":
    print(json.dumps(main()))
