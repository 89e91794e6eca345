"""How tests run the toy engine: its server, and sgwatch with the toy registered."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SERVER = Path(__file__).with_name("server.py")
ROOT = SERVER.parents[2]  # where `tests` is a package


def registered(env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (else this process's) with the toy registered and importable."""
    env = dict(os.environ if env is None else env)
    path = [str(ROOT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return {**env, "SGWATCH_ENGINES": "tests.toyengine:ENGINE", "PYTHONPATH": os.pathsep.join(path)}


def server_argv(*args: str) -> list[str]:
    return [sys.executable, str(SERVER), *args]


def write_log(path: Path, *args: str) -> Path:
    """The log of one toy server run to its end (give it --decodes N or --crash-at)."""
    with path.open("wb") as out:
        subprocess.run(server_argv("--speed", "50", *args), stdout=out, timeout=60, check=False)
    return path
