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

from sgwatch.engines.host_option import from_action, live, switch

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
    help_text = (action.help or "").replace("%%", "%")
    if (found := switch(action)) is not None:
        return from_action(action, *found, deprecated=deprecated, help=help_text)
    kind = "choice" if action.choices else "value"
    names = list(action.option_strings)
    return from_action(
        action, kind, action.const, names, type_name(action), deprecated=deprecated, help=help_text
    )


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
    return live("vllm", vllm_version, options)


if __name__ == "__main__":
    print(json.dumps(main()))
