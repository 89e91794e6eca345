"""`sgwatch --help` as a user reads it: both engines, and every other command."""

import argparse
import subprocess
import sys

from sgwatch.cli.main import commands_parser


def test_help_names_both_engines_and_every_command():
    r = subprocess.run(
        [sys.executable, "-m", "sgwatch", "--help"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0
    about = " ".join(r.stdout.split("\n\n", 2)[1].split())  # the paragraph under usage
    assert about.startswith("Watch SGLang and vLLM servers warm up and serve")
    listed = r.stdout.split("other commands:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    sub = next(a for a in commands_parser()._actions if isinstance(a, argparse._SubParsersAction))
    # `sim` hands its whole command line to the simulated server: it has no sub-parser.
    assert sorted(line.split()[1] for line in listed) == sorted([*sub.choices, "sim"])
    assert {"launch", "restart", "replay", "wait", "events", "bench"} <= set(sub.choices)
