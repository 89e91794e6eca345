"""Runs on the host with the server's own interpreter (sent over stdin; stdlib only).

Asks the server's own argument parser whether it accepts a new argv, before
the running server is touched (DESIGN.md §7 step 1): SGLang's ServerArgs
parser, or the simulator's (which also applies its startup checks, such as
--language-only needing --encoder-urls). The request is the REQUEST literal
below; prints one JSON object:
    {"ok": true|false, "error": "...", "checked_by": "..."}
or {"ok": null, "error": "..."} when no parser could be built (the caller then
relies on its flag catalog alone).
"""

import argparse
import contextlib
import io
import json
import sys

REQUEST = None  # replaced by the caller: {"module": ..., "args": [...]}


def last_line(text, fallback):
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else fallback


def check_simulator(args):
    from sgwatch.sim.args import parse

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            resolved = parse(args)
    except SystemExit:
        return {"ok": False, "error": last_line(err.getvalue(), "refused")}
    if resolved.invalid:
        return {"ok": False, "error": resolved.invalid}
    return {"ok": True}


def check_sglang(args):
    with contextlib.redirect_stdout(sys.stderr):
        from sglang.srt.server_args import ServerArgs
    parser = argparse.ArgumentParser(prog="sglang")
    ServerArgs.add_cli_args(parser)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(args)
    except SystemExit:
        return {"ok": False, "error": last_line(err.getvalue(), "refused")}
    return {"ok": True}


def main(req):
    simulator = req["module"] == "sgwatch.sim"
    try:
        answer = (check_simulator if simulator else check_sglang)(req["args"])
    except Exception as e:  # no parser to ask: not an answer about the flags
        return {"ok": None, "error": f"{type(e).__name__}: {e}"}
    answer["checked_by"] = "the simulator's parser" if simulator else "the host's SGLang parser"
    return answer


if __name__ == "__main__":
    print(json.dumps(main(REQUEST)))
