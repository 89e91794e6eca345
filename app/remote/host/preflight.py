"""Runs on the host with the server's own interpreter (sent over stdin; stdlib only).

Asks the server's own argument parser whether it accepts a new argv, before
the running server is touched (the restart protocol's first step,
docs/design/architecture.md). The engine names the
parser as data (its Engine.preflight_request): `entry` is "module:attribute",
either a function that adds the server's arguments to an argparse parser
(`builds_parser`, SGLang's `ServerArgs.add_cli_args`) or one that takes the
argv and returns the startup error, if any (the simulator's, which also
applies checks such as --language-only needing --encoder-urls). `parser`, when
given, is the parser class to build (vLLM's FlexibleArgumentParser); an entry may
list places separated by `|`, for modules that moved between releases: the first
that imports is used. The request is the REQUEST literal below; prints one JSON object:
    {"ok": true|false, "error": "...", "checked_by": "..."}
or {"ok": null, "error": "..."} when no parser could be built (the caller then
relies on its flag catalog alone).
"""

import argparse
import contextlib
import importlib
import io
import json
import sys

REQUEST = None  # filled when sent: {"entry", "builds_parser", "prog", "args", "checked_by"}
# (and "parser", optional)


def last_line(text, fallback):
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else fallback


def load(entry):
    places = entry.split("|")
    for i, place in enumerate(places):
        module, _, path = place.partition(":")
        try:
            with contextlib.redirect_stdout(sys.stderr):  # what an import prints is not the answer
                target = importlib.import_module(module)
            for name in path.split("."):
                target = getattr(target, name)
            return target
        except (ImportError, AttributeError):
            if i == len(places) - 1:
                raise


def judge(target, req):
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            if req["builds_parser"]:
                parser_cls = load(req["parser"]) if req.get("parser") else argparse.ArgumentParser
                parser = parser_cls(prog=req["prog"])
                target(parser)
                parser.parse_args(req["args"])
                error = None
            else:
                error = target(req["args"])
    except SystemExit:  # argparse refused and printed why
        return {"ok": False, "error": last_line(err.getvalue(), "refused")}
    return {"ok": False, "error": error} if error else {"ok": True}


def main(req):
    try:
        answer = judge(load(req["entry"]), req)
    except Exception as e:  # no parser to ask: not an answer about the flags
        return {"ok": None, "error": f"{type(e).__name__}: {e}"}
    answer["checked_by"] = req["checked_by"]
    return answer


if __name__ == "__main__":
    print(json.dumps(main(REQUEST)))
