"""Runs on the host with the server's own interpreter (sent over stdin; stdlib only,
Python >= 3.8): SGLang's live flag catalog (ENGINE.catalog_program).

Builds SGLang's real argument parser (`ServerArgs.add_cli_args`, as the server
does) and prints every option as one JSON object, the shape of the bundled
catalogs that scripts/gen_sglang_catalog.py writes, so the two are read alike:
    {"engine": "sglang", "version": ..., "origin": "live", "python": ...,
     "options": [{"names", "dest", "kind", "type", "nargs", "const", "default",
                  "choices", "required", "deprecated", "removed", "replacement",
                  "field", "resolvable", "fallback", "help"}, ...]}
(keys at their default value are left out). When SGLang cannot be imported it
prints {"engine": "sglang", "error": "..."} and exits 0: the caller falls back
to a bundled catalog. Importing server_args loads torch: seconds, no GPU.
"""

import argparse
import contextlib
import io
import json
import re
import sys

from sgwatch.engines.host_option import from_action, jsonable, live, switch

TYPES = {"int": "int", "float": "float", "str": "str", "nullable_str": "str", "loads": "json"}


def rejects(action, parser):
    """Whether giving a deprecated flag stops the launch (it only exists to say so)."""
    ns = argparse.Namespace()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            action(parser, ns, None if action.nargs == 0 else [], action.option_strings[0])
    except SystemExit:
        return True
    except Exception:
        return True
    return False


def is_deprecated(action):
    text = action.help or ""
    if text.lstrip("([ ").lower().startswith("deprecated"):
        return True
    return any(n + " is deprecated" in text for n in action.option_strings)


def describe(action, parser, renames, resolvable, fallbacks):
    names, type_ = list(action.option_strings), None
    if (found := switch(action)) is not None:
        kind, const, names = found
    elif action.nargs == 0:
        const = getattr(action, "const_value", None)
        kind = "store_true" if const is None else "store_const"
    else:
        kind, const = "choice" if action.choices else "value", None
        type_ = action.type.__name__ if action.type is not None else "str"
        type_ = TYPES.get(type_, type_)
    deprecated = "Deprecat" in type(action).__name__ or is_deprecated(action)
    replacement = getattr(action, "new_flag", None)
    if deprecated and replacement is None:
        text = f"{action.help or ''} {getattr(action, 'error_message', None) or ''}"
        mentioned = re.findall(r"--[a-z0-9][a-z0-9-]*", text)
        replacement = next((f for f in mentioned if f not in names), None)
    return from_action(
        action,
        kind,
        const,
        names,
        type_,
        required=bool(action.required),
        deprecated=deprecated,
        removed=deprecated and rejects(action, parser),
        replacement=replacement,
        field=renames.get(action.dest),
        resolvable=action.dest in resolvable,
        fallback=jsonable(fallbacks.get(action.dest))[0],
        help=action.help or "",
    )


def main():
    # Whatever SGLang prints while importing goes to stderr: stdout carries only the JSON.
    with contextlib.redirect_stdout(sys.stderr):
        try:
            from sglang.srt.server_args import ServerArgs
        except Exception as e:  # any import failure means: use a bundled catalog
            return {"engine": "sglang", "error": f"{type(e).__name__}: {e}"}
        return catalog(ServerArgs)


def catalog(server_args):
    try:
        from importlib.metadata import version

        sglang_version = version("sglang")
    except Exception:
        sglang_version = None
    parser = argparse.ArgumentParser(prog="sglang serve")
    server_args.add_cli_args(parser)
    renames = {}
    try:  # 0.4-0.5.x: `args.tp_size = args.tensor_parallel_size` in from_cli_args
        import inspect

        source = inspect.getsource(server_args.from_cli_args)
        renames = {d: f for f, d in re.findall(r"args\.(\w+) = args\.(\w+)\s*$", source, re.M)}
    except Exception:
        pass
    resolvable, fallbacks = set(), {}
    try:  # 0.5.2x: fields that resolution may fill, and their scalar fallbacks
        from sglang.srt.arg_groups.arg_utils import fallbacks_of, resolvable_fields

        resolvable, fallbacks = set(resolvable_fields(server_args)), dict(fallbacks_of(server_args))
    except Exception:
        pass
    options = [
        describe(a, parser, renames, resolvable, fallbacks)
        for a in parser._actions
        if not isinstance(a, argparse._HelpAction)
    ]
    return live("sglang", sglang_version, options)


if __name__ == "__main__":
    print(json.dumps(main()))
