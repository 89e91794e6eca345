"""Ctrl-C while sgwatch is still importing its commands (its first half second or so)
exits with the table's status for an interrupt, without Python's traceback."""

import subprocess
import sys

from sgwatch.cli.exitcodes import INTERRUPTED

PROGRAM = """
import importlib.abc
import sys


class Interrupting(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "sgwatch.cli.main":
            raise KeyboardInterrupt  # as a Ctrl-C lands while the commands are imported


sys.meta_path.insert(0, Interrupting())
from sgwatch.__main__ import main

sys.exit(main())
"""


def test_ctrl_c_while_starting_exits_130_quietly():
    r = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (INTERRUPTED, "")
